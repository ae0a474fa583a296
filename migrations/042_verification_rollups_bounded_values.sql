-- The hourly counts of the hostnames and page actions (migrations 017, 019 and 021) keep at most
-- 100 distinct values per site, hour and kind; the rest are counted under '<other>', a value no
-- hostname (WHATWG URL refuses '<' and '>' in a host) nor page action (^[A-Za-z0-9_/-]{1,32}$)
-- can be. Both values are the visitor's to choose: a flood of scored verifications, each from its
-- own Origin subdomain and with its own page action, made two rows of counts per verification (one
-- address's rate limit, 7,200 an hour per kind), and the stats' reads of whole hours, meant to
-- cost the same whatever the verifications in them, grew with them (1.2-1.5 s for a day's stats
-- instead of 0.11 s). ROLLUP_VALUES_PER_HOUR and OTHER_ROLLUP_VALUE in
-- src/storage/sql/rollup-values.ts are the same bound and value, and addRollupCounts there the
-- same statement for the log's writer (migration 020) and the retention sweep (migration 041);
-- the triggers below count every other INSERT and DELETE as they do.
--
-- Adding, a value is counted as itself when its hour has a row for it, or while the hour holds
-- fewer than 100 values (a statement's new values most counted first); else under '<other>'.
-- Taking away, a value's row is lowered by as much as it holds and '<other>' by the rest, so a
-- deleted row that was counted under '<other>' lowers '<other>' rather than making a negative
-- count. Which of the two holds a count may drift (a value counted under '<other>' that later got
-- a row of its own, after a deletion made room in its hour, lowers its own row first); the sum of
-- an hour's counts never does, and no count goes below zero. Writers of one hour at the same
-- moment each see the room as of their statement's start, so an hour holds at most 100 values per
-- writer running at once: still a bound per hour, not per verification.
CREATE OR REPLACE FUNCTION verification_rollups_statement(source text, sign integer) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT format('
    WITH facts AS (
      SELECT site_id, hour, kind, value, count(*) AS count FROM (
        SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch'') AS hour, ''action'' AS kind, action AS value FROM %1$I
        UNION ALL
        SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''anomaly'', label FROM %1$I CROSS JOIN LATERAL unnest(anomalies) AS label
        UNION ALL
        SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''country'', country_code FROM %1$I WHERE country_code IS NOT NULL
        UNION ALL
        SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''score'', verification_score_bucket(risk_score) FROM %1$I WHERE risk_score IS NOT NULL
        UNION ALL
        SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''hostname'', hostname FROM %1$I WHERE hostname IS NOT NULL AND risk_score IS NOT NULL
        UNION ALL
        SELECT site_id, date_bin(''1 hour'', created_at, timestamptz ''epoch''), ''page_action'', page_action FROM %1$I WHERE page_action IS NOT NULL AND risk_score IS NOT NULL
      ) AS facts
      GROUP BY site_id, kind, hour, value
    )
    INSERT INTO verification_rollups AS rollup (site_id, hour, kind, value, count)
    SELECT site_id, hour, kind, value, sum(count) FROM (
      SELECT split.site_id, split.hour, split.kind, part.value, part.count FROM (
        SELECT facts.site_id, facts.hour, facts.kind, facts.value, facts.count,
               CASE WHEN facts.kind NOT IN (''hostname'', ''page_action'') THEN facts.count
                    WHEN %2$s < 0 THEN least(facts.count, greatest(counted.count, 0))
                    WHEN counted.value IS NOT NULL THEN facts.count
                    WHEN row_number() OVER (PARTITION BY facts.site_id, facts.kind, facts.hour, counted.value IS NULL ORDER BY facts.count DESC, facts.value) <= room.free THEN facts.count
                    ELSE 0 END AS kept
          FROM facts
          LEFT JOIN verification_rollups AS counted
            ON facts.kind IN (''hostname'', ''page_action'') AND counted.site_id = facts.site_id AND counted.kind = facts.kind AND counted.hour = facts.hour AND counted.value = facts.value
          LEFT JOIN (
            SELECT hours.site_id, hours.kind, hours.hour, 100 - (
                SELECT count(*) FROM (
                  SELECT 1 FROM verification_rollups AS held
                   WHERE held.site_id = hours.site_id AND held.kind = hours.kind AND held.hour = hours.hour AND held.value <> ''<other>''
                   LIMIT 100
                ) AS held) AS free
              FROM (SELECT DISTINCT site_id, kind, hour FROM facts WHERE kind IN (''hostname'', ''page_action'')) AS hours
          ) AS room ON room.site_id = facts.site_id AND room.kind = facts.kind AND room.hour = facts.hour
      ) AS split
      CROSS JOIN LATERAL (VALUES (split.value, %2$s * split.kept), (''<other>'', %2$s * (split.count - split.kept))) AS part (value, count)
      WHERE part.count <> 0
    ) AS bounded
    GROUP BY site_id, kind, hour, value
    ORDER BY site_id, kind, hour, value
    ON CONFLICT (site_id, kind, hour, value) DO UPDATE SET count = rollup.count + excluded.count', source, sign)
$fn$;

-- The hours counted before: beyond their 100 most counted values, a site's hostnames and page
-- actions of an hour are folded into '<other>', so that a flood's hours already counted cost the
-- stats no more than the next ones. As in 021, writers of the log wait until this commits.
LOCK TABLE verifications IN SHARE MODE;

WITH ranked AS (
  SELECT site_id, kind, hour, value, row_number() OVER (PARTITION BY site_id, kind, hour ORDER BY count DESC, value) AS rank
    FROM verification_rollups
   WHERE kind IN ('hostname', 'page_action') AND value <> '<other>'
),
folded AS (
  DELETE FROM verification_rollups AS rollup USING ranked
   WHERE ranked.rank > 100
     AND rollup.site_id = ranked.site_id AND rollup.kind = ranked.kind AND rollup.hour = ranked.hour AND rollup.value = ranked.value
  RETURNING rollup.site_id, rollup.kind, rollup.hour, rollup.count
)
INSERT INTO verification_rollups AS rollup (site_id, hour, kind, value, count)
SELECT site_id, hour, kind, '<other>', sum(count) FROM folded
 GROUP BY site_id, kind, hour
 ORDER BY site_id, kind, hour
ON CONFLICT (site_id, kind, hour, value) DO UPDATE SET count = rollup.count + excluded.count;
