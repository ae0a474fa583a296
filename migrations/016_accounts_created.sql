-- The first account's setup code (SIGNUPS=first) was derived from the server secret alone, so it
-- never changed: once every account had been deleted, the code in any old log opened the server
-- again. It now takes in how many accounts were ever created, which this sequence counts (a
-- trigger, so that accounts made by `npm run account` count too): a code is void once used.
CREATE SEQUENCE accounts_created;

-- A database with accounts already starts past 0, so that the code logged before they existed is void too.
SELECT setval('accounts_created', count(*)) FROM accounts HAVING count(*) > 0;

CREATE FUNCTION accounts_count_creation() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM nextval('accounts_created');
  RETURN NULL;
END
$fn$;

CREATE TRIGGER accounts_count_creation AFTER INSERT ON accounts FOR EACH ROW EXECUTE FUNCTION accounts_count_creation();
