-- The account that acted, for the actors that are an account's (a session, an API key): its id and
-- its e-mail address as they were when the event was written, like actor_name. An API key's name
-- is whatever its member chose ("alice-laptop"), so the owner of a shared site could not tell
-- whose key changed it; now the event says. No foreign key: the account may be deleted since,
-- and the site's owner keeps the record of what it did.
--
-- Both nullable without a default: adding them rewrites nothing. Events written before this
-- migration, and by instances of an older version still running during an upgrade (which name
-- their columns), keep null: the dashboard then names the key alone, as before.
ALTER TABLE audit_events
  ADD COLUMN actor_account_id uuid,
  ADD COLUMN actor_email text;
