-- The verification log's writer adds the hourly counts of the rows it writes itself, in the same
-- transaction (src/storage/sql/verification-log-writer.ts), and says so with the transaction's
-- setting tollgate.rollups_counted = 'on'; the insert trigger then leaves those rows to it. Its
-- statement, run for every batch and planned anew each time, cost PGlite about as much CPU as
-- inserting the rows (bench/README.md, "Core flow"), while the writer counts a batch in a few
-- microseconds. Any other INSERT (an instance of an earlier version during a rolling upgrade, a
-- manual one) is counted by the trigger as before, and so is every DELETE.
CREATE OR REPLACE FUNCTION verification_rollups_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF current_setting('tollgate.rollups_counted', true) = 'on' THEN
      RETURN NULL;
    END IF;
    EXECUTE verification_rollups_statement('added', 1);
  ELSE
    EXECUTE verification_rollups_statement('removed', -1);
    -- Counts that reached 0 (or less, should they ever have drifted from the log), looked for
    -- only in the hours the deleted rows were in.
    DELETE FROM verification_rollups AS rollup
     USING (
       SELECT site_id, date_bin('1 hour', min(created_at), timestamptz 'epoch') AS first_hour, max(created_at) AS last_time
         FROM removed GROUP BY site_id
     ) AS spans
     WHERE rollup.site_id = spans.site_id AND rollup.kind IN ('action', 'anomaly', 'country', 'score', 'hostname')
       AND rollup.hour >= spans.first_hour AND rollup.hour <= spans.last_time AND rollup.count <= 0;
  END IF;
  RETURN NULL;
END
$fn$;
