-- E-mail addresses are kept in Unicode normalization form C, as sign-up and log-in now write and
-- look them up: "é" typed as one character or as "e" and a combining accent is one address.
-- An address whose normal form another account holds already (a near-duplicate signed up before
-- this) is left as it is rather than failing the migration; of near-duplicates none of which is
-- in normal form yet (two accents typed in either order), the oldest id gets it.
-- Normalization needs a UTF-8 database; on another encoding the addresses are left as they are.
DO $$
BEGIN
  IF current_setting('server_encoding') = 'UTF8' THEN
    UPDATE accounts AS account
    SET email = normalize(account.email, NFC)
    WHERE account.email IS NOT NFC NORMALIZED
      AND NOT EXISTS (
        SELECT 1 FROM accounts AS other
        WHERE other.id <> account.id
          AND lower(normalize(other.email, NFC)) = lower(normalize(account.email, NFC))
          AND (other.email IS NFC NORMALIZED OR other.id < account.id)
      );
  END IF;
END
$$;
