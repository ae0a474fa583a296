-- Dashboard log-in sessions. The cookie carries a random token; only its SHA-256 is stored, so a
-- copy of this table logs nobody in. A row is the session: deleting it logs out at once.
CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_account_expiry ON sessions (account_id, expires_at);

-- API keys for scripts and CI, sent as "Authorization: Bearer <key>". Stored as SHA-256 with a
-- short visible prefix so that people can tell their keys apart. Revoking deletes the row.
CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL,
  prefix text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at);
