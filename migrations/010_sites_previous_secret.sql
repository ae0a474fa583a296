-- Rotating a site's secret key can keep the previous key working for a while (two hours unless
-- the operator ends it), so a backend can move to the new key without failed Siteverify calls.
-- Only the previous key's SHA-256 is kept, as for the current key, with the moment it stops.
ALTER TABLE sites
  ADD COLUMN previous_secret_key_hash text,
  ADD COLUMN previous_secret_expires_at timestamptz,
  ADD CONSTRAINT sites_previous_secret_complete
    CHECK ((previous_secret_key_hash IS NULL) = (previous_secret_expires_at IS NULL));
