-- The account's audit log: who changed what, from where, and when (log-ins, failed log-ins, the
-- password, sessions ended, API keys, and every change to a site, its keys and its webhook). Each
-- event is written in the transaction of the change it records, so a change without its event,
-- or an event without its change, cannot be. The site's id and name are copies, not a foreign key:
-- an event outlives its site's deletion, which it may record. Actor and address are copies too:
-- the API key or session that acted may be gone since. Events go with their account.
CREATE TABLE audit_events (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  action text NOT NULL,
  -- session, api-key, operator (the account script on the server) or anonymous (a failed log-in).
  actor_type text NOT NULL,
  -- The session's or API key's id, when the actor had one.
  actor_id uuid,
  -- The account's e-mail address for a session, the key's name for an API key.
  actor_name text,
  -- The key's prefix, for an API key.
  actor_key_prefix text,
  client_ip text,
  user_agent text,
  site_id uuid,
  site_name text,
  details jsonb NOT NULL DEFAULT '{}'
);

CREATE INDEX audit_events_account_time ON audit_events (account_id, created_at DESC, id DESC);
CREATE INDEX audit_events_site_time ON audit_events (account_id, site_id, created_at DESC, id DESC) WHERE site_id IS NOT NULL;
-- Retention deletes the oldest events of every account.
CREATE INDEX audit_events_time ON audit_events (created_at);
