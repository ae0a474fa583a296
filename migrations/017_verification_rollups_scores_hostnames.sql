-- Two more kinds of hourly counts (migration 007), for the stats' score distribution and top
-- hostnames: 'score', whose value is the risk score's bucket of ten ('0', '10', ... '90'; 100
-- counts in '90'), for the rows with a score (rejected submissions have none); and 'hostname',
-- for the scored rows that name the page's host. A rejected submission's hostname is left out: it
-- costs no proof of work, and a client could otherwise add a row of counts per request by sending
-- a new Origin each time. The triggers of 007 keep them as they keep the others.

-- Writers of the log wait until this commits: a row they added meanwhile would be counted neither
-- by the backfill below (not yet committed) nor by the trigger (still the function of 007), and
-- the new counts would stay below the log for good.
LOCK TABLE verifications IN SHARE MODE;

ALTER TABLE verification_rollups DROP CONSTRAINT verification_rollups_kind_check;
ALTER TABLE verification_rollups ADD CONSTRAINT verification_rollups_kind_check
  CHECK (kind IN ('action', 'anomaly', 'country', 'score', 'hostname'));

-- The bucket of a risk score (0-100) as its rollups and the stats' reads of the log's part-hours
-- both name it, so that the two give the same numbers. Inlined by the planner (a plain
-- expression); it does not pass NULL through: callers leave out the rows without a score.
CREATE FUNCTION verification_score_bucket(score integer) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT (least(greatest(score, 0), 99) / 10 * 10)::text
$fn$;

CREATE OR REPLACE FUNCTION verification_rollups_statement(source text, sign integer) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT format('
    INSERT INTO verification_rollups AS rollup (site_id, hour, kind, value, count)
    SELECT site_id, hour, kind, value, %s * count(*) FROM (
      SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch'') AS hour, ''action'' AS kind, action AS value FROM %I
      UNION ALL
      SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''anomaly'', label FROM %I CROSS JOIN LATERAL unnest(anomalies) AS label
      UNION ALL
      SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''country'', country_code FROM %I WHERE country_code IS NOT NULL
      UNION ALL
      SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''score'', verification_score_bucket(risk_score) FROM %I WHERE risk_score IS NOT NULL
      UNION ALL
      SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''hostname'', hostname FROM %I WHERE hostname IS NOT NULL AND risk_score IS NOT NULL
    ) AS facts
    GROUP BY site_id, kind, hour, value
    ORDER BY site_id, kind, hour, value
    ON CONFLICT (site_id, kind, hour, value) DO UPDATE SET count = rollup.count + excluded.count', sign, source, source, source, source, source)
$fn$;

-- As in 007, with the new kinds among those whose emptied counts are removed (the kind list lets
-- the primary key's index find them).
CREATE OR REPLACE FUNCTION verification_rollups_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
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

-- The log so far, for the new kinds only (007 counted the others).
INSERT INTO verification_rollups (site_id, hour, kind, value, count)
SELECT site_id, hour, kind, value, count(*) FROM (
  SELECT site_id, date_bin('1 hour', created_at, timestamptz 'epoch') AS hour, 'score' AS kind, verification_score_bucket(risk_score) AS value
    FROM verifications WHERE risk_score IS NOT NULL
  UNION ALL
  SELECT site_id, date_bin('1 hour', created_at, timestamptz 'epoch'), 'hostname', hostname FROM verifications WHERE hostname IS NOT NULL AND risk_score IS NOT NULL
) AS facts
GROUP BY site_id, kind, hour, value;
