-- The first account's setup code (SIGNUPS=first) was derived from the server secret alone, so it
-- never changed: once every account had been deleted, the code in any old log opened the server
-- again. It now takes in how many accounts were ever created, which this one-row table counts (a
-- trigger, so that accounts made by `npm run account` count too; a table, not a sequence, because
-- a sequence jumps ahead after a crash or a failover and the code the log showed would stop
-- working): a code is void once used.
CREATE TABLE accounts_created (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  count bigint NOT NULL
);

-- A database that has had accounts starts past 0, so that the code logged before them is void: one
-- with accounts now, or one that a start has already used (its secret check is recorded at start,
-- after the migrations), whose accounts may all have been deleted.
INSERT INTO accounts_created (count)
SELECT CASE
  WHEN (SELECT count(*) FROM accounts) > 0 THEN (SELECT count(*) FROM accounts)
  WHEN EXISTS (SELECT 1 FROM server_key_check) THEN 1
  ELSE 0
END;

CREATE FUNCTION accounts_count_creation() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE accounts_created SET count = count + 1;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER accounts_count_creation AFTER INSERT ON accounts FOR EACH ROW EXECUTE FUNCTION accounts_count_creation();
