-- The names people give sites, API keys and passkeys are kept in Unicode normalization form C, as
-- the API writes them (display-name.ts, normalizeDisplayName): a name written before, with an
-- accent typed apart from its letter ("Mu" and a combining diaeresis, as macOS and some keyboards
-- give it), is rewritten to the composed form, so that it sorts, searches and compares as the
-- same name typed composed. Names are not unique: nothing can clash. Normalization needs a UTF-8
-- database; on another encoding the names are left as they are. Older instances read the names
-- as they are, whatever their form.
DO $$
BEGIN
  IF current_setting('server_encoding') = 'UTF8' THEN
    UPDATE sites SET name = normalize(name, NFC) WHERE name IS NOT NFC NORMALIZED;
    UPDATE api_keys SET name = normalize(name, NFC) WHERE name IS NOT NFC NORMALIZED;
    UPDATE account_passkeys SET name = normalize(name, NFC) WHERE name IS NOT NFC NORMALIZED;
  END IF;
END
$$;
