-- Operators' accounts. E-mail addresses are unique regardless of case.
CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX accounts_email_unique ON accounts (lower(email));

-- Protected sites. The secret key is stored only as its SHA-256 (it is 256 random bits, so a
-- plain hash cannot be brute-forced); the webhook secret is AES-256-GCM ciphertext because the
-- service must read it back to sign. account_id is NULL only for the development demo site.
CREATE TABLE sites (
  id uuid PRIMARY KEY,
  account_id uuid REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL,
  site_key text NOT NULL UNIQUE,
  secret_key_hash text NOT NULL,
  domains text[] NOT NULL DEFAULT '{}',
  settings jsonb NOT NULL DEFAULT '{}',
  webhook_secret_ciphertext text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sites_account ON sites (account_id, created_at);
