-- Migration 017 first counted the hostnames of rejected submissions too, then only of scored
-- verifications (a rejected submission costs no proof of work, and a client sending a new Origin
-- each time would add a row of counts per request). A database that ran the first form gets the
-- second here: the statement its triggers run, and its hostname counts taken again from the log.
-- On a database that ran the second form the counts come out the same.

-- As in 017: writers of the log wait, so that no row escapes both the recount and the trigger.
LOCK TABLE verifications IN SHARE MODE;

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

DELETE FROM verification_rollups WHERE kind = 'hostname';

INSERT INTO verification_rollups (site_id, hour, kind, value, count)
SELECT site_id, date_bin('1 hour', created_at, timestamptz 'epoch'), 'hostname', hostname, count(*)
  FROM verifications WHERE hostname IS NOT NULL AND risk_score IS NOT NULL
 GROUP BY 1, 2, 4;
