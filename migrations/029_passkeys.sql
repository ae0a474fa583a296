-- Passkeys (WebAuthn discoverable credentials) that log an account in instead of its password and
-- second factor. The browser names a passkey by its credential id (base64url, unique across the
-- server: an authenticator makes a new one per registration); the public key is the COSE key the
-- authenticator gave at registration, base64url as well, so that PGlite's worker and pg pass it
-- as the same text. counter is the authenticator's signature counter (an unsigned 32-bit number,
-- hence bigint): a sign-in whose counter is not above it, when either is non-zero, comes from a
-- copy of the authenticator and is refused. transports are the browser's hints for finding the
-- authenticator again (internal, usb, hybrid...). A passkey goes with its account.
--
-- The index by account serves the account page's list and the count that limits an account to
-- ten passkeys (taken under the account's row lock, so the count is exact).
--
-- sessions.passkey_id names the passkey a passkey sign-in opened the session with (null: a
-- password log-in): removing the passkey ends its sessions, explicitly and, for one opened at the
-- same moment, by the foreign key's cascade.
--
-- Rolling upgrade: a new table that older instances neither read nor write, and a nullable column
-- of sessions that they leave null (their log-ins are password log-ins) and do not read. A passkey sign-in or
-- the account page's Passkeys section that reaches an older instance answers 404 (an unknown
-- route); passkeys registered meanwhile work once every instance runs this release.
CREATE TABLE account_passkeys (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  credential_id text NOT NULL UNIQUE,
  public_key text NOT NULL,
  counter bigint NOT NULL DEFAULT 0 CHECK (counter >= 0),
  transports text[] NOT NULL DEFAULT '{}',
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
CREATE INDEX account_passkeys_account ON account_passkeys (account_id, created_at);

ALTER TABLE sessions ADD COLUMN passkey_id uuid REFERENCES account_passkeys (id) ON DELETE CASCADE;
CREATE INDEX sessions_passkey ON sessions (passkey_id) WHERE passkey_id IS NOT NULL;
