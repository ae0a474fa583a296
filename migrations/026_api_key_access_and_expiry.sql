-- What an API key may do, and until when. A 'read' key may only read (GET and HEAD on the
-- dashboard API): enough for a monitor or a SIEM export, and nothing for whoever copies it from
-- there. expires_at NULL is a key that never expires; an expired key is refused (by the database's
-- clock, whatever the instances' clocks say) but stays listed until it is revoked, so that its
-- owner sees why a script stopped. Keys made before this migration stay full and never expire.
-- Instances of an older version, still running during an upgrade, know neither column: they take
-- a read or expired key as a full one until they are replaced.
ALTER TABLE api_keys
  ADD COLUMN access text NOT NULL DEFAULT 'full' CHECK (access IN ('full', 'read')),
  ADD COLUMN expires_at timestamptz;
