-- What a site's backend (POST /api/v1/siteverify/feedback) or its operator (the dashboard) learned
-- later about a verification: legitimate or fraudulent, why (a reason of a fixed list), a short
-- note, when and by which of the two. Relabeling overwrites: the last label wins. The columns are
-- nullable without a default, so adding them on PostgreSQL rewrites nothing and is instant; the
-- rollups (migrations 007 to 021) count nothing of them, and the writers' bulk loads (the PGlite
-- worker's binary COPY included) name their columns, so new rows simply have no label.
--
-- Two partial indexes. verifications_site_challenge finds the scored row a token (or the id
-- Siteverify answered, metadata.verification_id: the challenge's id) came from; unlike 023's it is
-- not empty at the start: building it reads the whole table while the migration's transaction
-- holds it (about as long as 023's, some 0.2 s per million rows), writers waiting meanwhile with
-- their rows in memory. verifications_site_labeled reads a site's labels for its stats: labels are
-- few, so it stays small whatever the log's size, and starts empty.
--
-- Rolling upgrade: instances of an older version, still running during the upgrade, neither read
-- nor write the columns; their rows are written as before (unlabeled), and their stats show no
-- feedback until they are replaced. A feedback call that reaches one of them is a 404 of the
-- unknown route: a backend retries it later.
-- The rollups' statement (migration 021) named each unnested anomaly `label`, which the new column
-- would make ambiguous in the trigger's transition tables (every DELETE, the retention's too, and
-- an older instance's INSERT would fail): the same statement, the unnested anomaly named apart.
CREATE OR REPLACE FUNCTION verification_rollups_statement(source text, sign integer) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT format('
    INSERT INTO verification_rollups AS rollup (site_id, hour, kind, value, count)
    SELECT site_id, hour, kind, value, %s * count(*) FROM (
      SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch'') AS hour, ''action'' AS kind, action AS value FROM %I
      UNION ALL
      SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''anomaly'', anomaly FROM %I CROSS JOIN LATERAL unnest(anomalies) AS anomaly
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

ALTER TABLE verifications
  ADD COLUMN label text CHECK (label IN ('legitimate', 'fraudulent')),
  ADD COLUMN label_reason text,
  ADD COLUMN label_note text,
  ADD COLUMN labeled_at timestamptz,
  ADD COLUMN label_source text CHECK (label_source IN ('siteverify', 'dashboard'));

CREATE INDEX verifications_site_challenge ON verifications (site_id, challenge_id) WHERE challenge_id IS NOT NULL AND action <> 'rejected';
CREATE INDEX verifications_site_labeled ON verifications (site_id, labeled_at) WHERE label IS NOT NULL;
