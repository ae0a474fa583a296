-- When the server's operator disabled the account (`npm run account -- disable`); null while it
-- may log in. A disabled account cannot log in (password or passkey), and its sessions and API
-- keys are refused on every request: both are looked up in the database with the account's row
-- on each request (never cached), so disabling takes effect at once on every instance.
-- `npm run account -- enable` sets it back to null.
--
-- Nullable without a default: adding it rewrites nothing. Rolling upgrade: instances of an older
-- version, still running during the upgrade, do not know the column and let a disabled account's
-- API keys in until they are replaced (its sessions were ended when it was disabled).
ALTER TABLE accounts ADD COLUMN disabled_at timestamptz;
