-- A site did not say when its secret key was last rotated: an operator checking that keys are
-- rotated on schedule had to search the audit log. Set by each rotation; null until the first
-- (a site's first key is as old as the site).
ALTER TABLE sites ADD COLUMN secret_rotated_at timestamptz;
