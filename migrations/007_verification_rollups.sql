-- Hourly counts of the verification log, so that stats read a row per hour and action (anomaly
-- label, country) instead of every verification. kind is 'action', 'anomaly' or 'country'; value
-- is the action, the label or the country code. Triggers keep the counts equal to the log's rows:
-- every INSERT into verifications adds, every DELETE (retention, a deleted site) subtracts, and a
-- count that reaches 0 is removed. Hours are UTC (whole hours since the epoch).
CREATE TABLE verification_rollups (
  site_id uuid NOT NULL,
  hour timestamptz NOT NULL,
  kind text NOT NULL CHECK (kind IN ('action', 'anomaly', 'country')),
  value text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (site_id, kind, hour, value)
);

-- The statement that adds to the rollups the counts of the log rows in `source` (the table itself
-- or a trigger's transition table) times `sign`: 1 for rows added, -1 for rows deleted. Groups go
-- in key order, so that concurrent writers lock rollup rows in the same order.
CREATE FUNCTION verification_rollups_statement(source text, sign integer) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT format('
    INSERT INTO verification_rollups AS rollup (site_id, hour, kind, value, count)
    SELECT site_id, hour, kind, value, %s * count(*) FROM (
      SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch'') AS hour, ''action'' AS kind, action AS value FROM %I
      UNION ALL
      SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''anomaly'', label FROM %I CROSS JOIN LATERAL unnest(anomalies) AS label
      UNION ALL
      SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''country'', country_code FROM %I WHERE country_code IS NOT NULL
    ) AS facts
    GROUP BY site_id, kind, hour, value
    ORDER BY site_id, kind, hour, value
    ON CONFLICT (site_id, kind, hour, value) DO UPDATE SET count = rollup.count + excluded.count', sign, source, source, source)
$fn$;

CREATE FUNCTION verification_rollups_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
     WHERE rollup.site_id = spans.site_id AND rollup.kind IN ('action', 'anomaly', 'country')
       AND rollup.hour >= spans.first_hour AND rollup.hour <= spans.last_time AND rollup.count <= 0;
  END IF;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER verifications_rollups_add AFTER INSERT ON verifications
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION verification_rollups_apply();
CREATE TRIGGER verifications_rollups_subtract AFTER DELETE ON verifications
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION verification_rollups_apply();

-- The log so far.
DO $fn$ BEGIN EXECUTE verification_rollups_statement('verifications', 1); END $fn$;
