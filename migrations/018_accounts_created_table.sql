-- Migration 016 first counted the accounts created with a sequence, then with a one-row table
-- (a sequence jumps ahead after a crash or a failover, and the setup code the log had shown would
-- stop working). A database that ran the first form gets the table here, starting from the
-- sequence's count (at least 1 where a start had recorded its secret check: its accounts may all
-- have been deleted); one that ran the second form already has it, and nothing changes.
DO $fn$
BEGIN
  IF (SELECT relkind FROM pg_class WHERE oid = to_regclass('accounts_created')) = 'S' THEN
    CREATE TABLE accounts_created_count (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      count bigint NOT NULL
    );
    INSERT INTO accounts_created_count (count)
    SELECT greatest(
      (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM accounts_created),
      (SELECT count(*) FROM accounts),
      CASE WHEN EXISTS (SELECT 1 FROM server_key_check) THEN 1 ELSE 0 END
    );
    CREATE OR REPLACE FUNCTION accounts_count_creation() RETURNS trigger LANGUAGE plpgsql AS $body$
    BEGIN
      UPDATE accounts_created SET count = count + 1;
      RETURN NULL;
    END
    $body$;
    DROP SEQUENCE accounts_created;
    ALTER TABLE accounts_created_count RENAME TO accounts_created;
  END IF;
END
$fn$;
