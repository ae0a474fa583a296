-- The addresses an API key may be used from: NULL is any address (every key made before this
-- migration), else the canonical addresses and ranges (203.0.113.0/24, 2001:db8::/48) that the
-- request's client address (the one TRUST_PROXY makes of it) must be on. Instances of an older
-- version, still running during an upgrade, do not know the column: they take a key restricted to
-- some addresses as one for any address until they are replaced.
ALTER TABLE api_keys ADD COLUMN allowed_addresses text[];
