-- Two-factor authentication of dashboard log-ins with an authenticator app (TOTP, RFC 6238).
-- The app's shared secret is sealed (AES-256-GCM under a key derived from TOLLGATE_SECRET, bound
-- to the account's id), because the service must read it back to check a code; `npm run secret --
-- change` seals it again. totp_last_step is the time step of the last code accepted, so that a
-- code seen over someone's shoulder cannot be used a second time. Two-factor is on exactly when
-- totp_enabled_at is set.
ALTER TABLE accounts
  ADD COLUMN totp_secret_sealed text,
  ADD COLUMN totp_enabled_at timestamptz,
  ADD COLUMN totp_last_step integer,
  ADD CONSTRAINT accounts_totp_complete CHECK ((totp_secret_sealed IS NULL) = (totp_enabled_at IS NULL));

-- One-time recovery codes, for a lost phone: 60 random bits each, stored as SHA-256 only (like API
-- keys). A used code keeps its row, so the account page can tell how many are left.
CREATE TABLE account_recovery_codes (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  code_hash text NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (account_id, code_hash)
);
