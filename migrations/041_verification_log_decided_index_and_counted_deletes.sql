-- Two changes for large logs (a walkthrough with 2,000,000 rows, 1,000 sites, one site of 838,817).
--
-- 1. The log's decidedBy filter, which the dashboard now offers (the "Decided by" select of the
-- verification log): migration 030 built no index for it, so a filtered page read every row of
-- the site's time window through verifications_site_time (1.3-1.9 s on the large site). The index
-- is on the filter's own expression (DECIDED_BY_SQL in src/storage/sql/decided-by.ts: decided_by,
-- or 'blocklist' for a row logged before 030 whose anomalies say so), after site_id and before the
-- log's order, as verifications_site_device_time (migration 023) is on device: a page of the
-- filter is then one range of it, read newest first up to its limit. It is partial, holding only
-- the rows a list decided (the expression is not null), so it stays small whatever the log's
-- size; the filter's `expression = $n` implies the predicate, so the planner can use it for any
-- value. The expression must stay DECIDED_BY_SQL's, or the planner no longer matches it:
-- test/storage/migration-upgrades.test.ts checks the filter's plan.
--
-- Cost: the build reads the table once (CREATE INDEX, not CONCURRENTLY: migrate.ts applies the
-- migrations in one transaction, where CONCURRENTLY cannot run, and PGlite runs them too). It
-- holds a SHARE lock on verifications meanwhile: readers go on, the writers' batches wait (each
-- instance's verification log writer keeps buffering, as for migration 028). Measured on
-- PostgreSQL 15, its pages in memory: 50 ms for 200,000 rows (36 MB), about 0.25 s per million.
CREATE INDEX verifications_site_decided_time ON verifications
  (site_id, (coalesce(decided_by, CASE WHEN anomalies && ARRAY['address_blocked', 'country_blocked']::text[] THEN 'blocklist' END)), created_at DESC, id DESC)
  WHERE coalesce(decided_by, CASE WHEN anomalies && ARRAY['address_blocked', 'country_blocked']::text[] THEN 'blocklist' END) IS NOT NULL;

-- 2. The retention sweep's deletes count their own rows (deleteOldest in
-- src/storage/sql/verification-query-repository.ts), as the log's writer counts its inserts since
-- migration 020: the statement that deletes a batch removes the counts of the hours it emptied
-- whole and subtracts those of the last, partial hour, and sets tollgate.rollup_deletes_counted
-- (for its transaction) so that this trigger does not subtract them again; the trigger turns it
-- off as it reads it, so that a later DELETE in the same transaction is counted. The trigger's
-- dynamic statement cost about three quarters of a 5,000-row DELETE on a large log, and a fixed
-- cost per statement besides, paid for each of the thousand sites a sweep visits. The trigger
-- still removes the counts that reached 0 in the hours the deleted rows were in, for every DELETE:
-- it runs after the whole statement, so it finds the subtracted counts. Every other DELETE (the
-- visitor erasure, an instance of an older version during a rolling upgrade) is counted by the
-- trigger as before.
CREATE OR REPLACE FUNCTION verification_rollups_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF current_setting('tollgate.rollups_counted', true) = 'on' THEN
      RETURN NULL;
    END IF;
    EXECUTE verification_rollups_statement('added', 1);
  ELSE
    IF current_setting('tollgate.rollup_deletes_counted', true) = 'on' THEN
      PERFORM set_config('tollgate.rollup_deletes_counted', 'off', true);
    ELSE
      EXECUTE verification_rollups_statement('removed', -1);
    END IF;
    -- Counts that reached 0 (or less, should they ever have drifted from the log), looked for
    -- only in the hours the deleted rows were in.
    DELETE FROM verification_rollups AS rollup
     USING (
       SELECT site_id, date_bin('1 hour', min(created_at), timestamptz 'epoch') AS first_hour, max(created_at) AS last_time
         FROM removed GROUP BY site_id
     ) AS spans
     WHERE rollup.site_id = spans.site_id AND rollup.kind IN ('action', 'anomaly', 'country', 'score', 'hostname', 'page_action')
       AND rollup.hour >= spans.first_hour AND rollup.hour <= spans.last_time AND rollup.count <= 0;
  END IF;
  RETURN NULL;
END
$fn$;
