-- The page's action (the SDK's `action`, reCAPTCHA's and Turnstile's page action: 'login',
-- 'signup') of each scored verification, so that operators see which of their forms is under
-- attack: a column of the log, and a kind of hourly counts (migration 007), 'page_action', for
-- the scored rows that name one. As with the hostnames (migration 019), a rejected submission's is
-- left out: it costs no proof of work, and a client could otherwise add a row of counts per request
-- by sending a new action each time. The writer of the log counts its own rows (migration 020;
-- src/storage/sql/verification-log-writer.ts), the triggers every other INSERT and every DELETE.

-- As in 017: writers of the log wait until this commits.
LOCK TABLE verifications IN SHARE MODE;

ALTER TABLE verifications ADD COLUMN page_action text;

ALTER TABLE verification_rollups DROP CONSTRAINT verification_rollups_kind_check;
ALTER TABLE verification_rollups ADD CONSTRAINT verification_rollups_kind_check
  CHECK (kind IN ('action', 'anomaly', 'country', 'score', 'hostname', 'page_action'));

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
      UNION ALL
      SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''page_action'', page_action FROM %I WHERE page_action IS NOT NULL AND risk_score IS NOT NULL
    ) AS facts
    GROUP BY site_id, kind, hour, value
    ORDER BY site_id, kind, hour, value
    ON CONFLICT (site_id, kind, hour, value) DO UPDATE SET count = rollup.count + excluded.count', sign, source, source, source, source, source, source)
$fn$;

-- As in 020, with the new kind among those whose emptied counts are removed.
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
     WHERE rollup.site_id = spans.site_id AND rollup.kind IN ('action', 'anomaly', 'country', 'score', 'hostname', 'page_action')
       AND rollup.hour >= spans.first_hour AND rollup.hour <= spans.last_time AND rollup.count <= 0;
  END IF;
  RETURN NULL;
END
$fn$;
