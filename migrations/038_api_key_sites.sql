-- The sites an API key may reach: NULL is every site its account owns or is a member of (every
-- key made before this migration), else only those of these ids that the account still reaches
-- (a site it later leaves, or that is deleted, the key just no longer reaches). A key's list is
-- set when it is made and never changes, so it needs no foreign keys. Instances of an older
-- version, still running during an upgrade, do not know the column: they take a restricted key
-- as one for every site until they are replaced.
ALTER TABLE api_keys ADD COLUMN site_ids uuid[];
