-- A second rotation within the grace period used to stop the key from before the first one at
-- once: the key most likely still deployed when an operator rotates again because the new key was
-- lost. The key replaced by the rotation before the last one now keeps its own grace period too
-- (so at most three keys work at once), kept like the others as a SHA-256 with when it stops.
ALTER TABLE sites
  ADD COLUMN earlier_secret_key_hash text,
  ADD COLUMN earlier_secret_expires_at timestamptz,
  ADD CONSTRAINT sites_earlier_secret_complete
    CHECK ((earlier_secret_key_hash IS NULL) = (earlier_secret_expires_at IS NULL));
