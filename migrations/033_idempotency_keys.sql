-- Idempotency-Key of the dashboard API's creations that answer a one-time secret (POST
-- /api/v1/sites): the first answer, kept for 24 hours so that a retry with the same key and
-- body gets it again instead of creating a second site whose secret nobody saw.
--
-- Scoped by account and route: two accounts (or two routes) may use one key. request_hash is an
-- HMAC-SHA256 (keyed from TOLLGATE_SECRET) of the canonical request body, to refuse the key's
-- reuse with another body (the body may hold a webhook secret: a plain hash would let a copy of the
-- database test guesses). The answer holds the one-time secret, so it is stored sealed
-- (AES-256-GCM under a key derived from TOLLGATE_SECRET, bound to the row's account, route and
-- key): response_ciphertext. The row is written in the transaction that creates the site, so
-- the two commit together or not at all. Rows older than 24 hours are ignored by the routes and
-- deleted by the hourly retention sweep.
CREATE TABLE idempotency_keys (
  account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  route text NOT NULL,
  idempotency_key text NOT NULL,
  request_hash text NOT NULL,
  response_ciphertext text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, route, idempotency_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
