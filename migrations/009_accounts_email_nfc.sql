-- E-mail addresses are kept in Unicode normalization form C, as sign-up and log-in now write and
-- look them up: "é" typed as one character or as "e" and a combining accent is one address.
-- An address whose normal form another account already holds (a near-duplicate signed up before
-- this) is left as it is rather than failing the migration.
UPDATE accounts AS account
SET email = normalize(account.email, NFC)
WHERE account.email IS NOT NFC NORMALIZED
  AND NOT EXISTS (
    SELECT 1 FROM accounts AS other
    WHERE other.id <> account.id AND lower(other.email) = lower(normalize(account.email, NFC))
  );
