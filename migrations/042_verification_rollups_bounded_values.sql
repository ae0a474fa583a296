-- The hourly counts of the hostnames and page actions (migrations 017, 019 and 021) keep at most
-- 100 distinct values per site, hour and kind, besides the hour before's 100 most counted (see
-- below); the rest are counted under '<other>', a value no hostname (WHATWG URL refuses '<' and '>'
-- in a host) nor page action (^[A-Za-z0-9_/-]{1,32}$) can be. Both values are the visitor's to
-- choose: a flood of scored verifications, each from its own Origin subdomain and with its own page
-- action, made two rows of counts per verification (one address's rate limit, 7,200 an hour per
-- kind), and the stats' reads of whole hours, meant to cost the same whatever the verifications in
-- them, grew with them (1.2-1.5 s for a day's stats instead of 0.11 s). ROLLUP_VALUES_PER_HOUR and
-- OTHER_ROLLUP_VALUE in src/storage/sql/rollup-values.ts are the same bound and value.
-- verification_rollups_bounded() decides, for the log's writer (migration 020), the retention sweep
-- (migration 041) and the triggers (every other INSERT and DELETE) alike, which value each count
-- goes under: a function in PL/pgSQL, so that its plan is made once per connection, not for each
-- batch (planned anew, the statement cost PGlite 1-4 ms of planning per 500-row batch, 10 ms at
-- worst).
--
-- Adding, a value is counted as itself when its hour has a row for it, or when it is one of the
-- hour before's 100 most counted values of the site and kind ('<other>' aside, ties by value), or
-- while the hour holds fewer than 100 values the hour before did not carry so (a statement's new
-- values most counted first); else under '<other>'. The carry-over is what keeps a flood from
-- blinding the stats: with the room alone, first come first counted, 100 made-up values at the
-- start of each hour sent the site's real ones (500 'login's) under '<other>' for the rest of it.
-- A value the site had the hour before keeps its row whatever came first; what a flood still
-- sends under '<other>' is a real value new in its hour (one not among the hour before's 100 most
-- counted) that first comes after the flood filled the room. The hour before's 100 most counted
-- are a range of the primary key (site_id, kind, hour, value), at most a few hundred rows, read
-- once per hour and kind of a statement.
-- Taking away, a value's row is lowered by as much as it holds and '<other>' by the rest, so a
-- deleted row that was counted under '<other>' lowers '<other>' rather than making a negative
-- count. Which of the two holds a count may drift (a value counted under '<other>' that later got
-- a row of its own, after a deletion made room in its hour, lowers its own row first); the sum of
-- an hour's counts never does, and no count goes below zero (but for two deletions of one hour's
-- rows at the same moment, which read the same counts: the delete trigger removes what either
-- takes below 0 at its statement's end, as since 007). An hour holds at most 100 carried values and
-- 100 others. Writers of one hour at the same moment each see the room as of their statement's
-- start, so an hour holds at most 100 new values per writer running at once (200 rows with the
-- carried ones): still a bound per hour, not per verification.
CREATE FUNCTION verification_rollups_bounded(site_ids uuid[], hours timestamptz[], kinds text[], vals text[], counts bigint[], sign integer)
  RETURNS TABLE (site_id uuid, hour timestamptz, kind text, value text, count bigint) LANGUAGE plpgsql STABLE AS $fn$
#variable_conflict use_column
BEGIN
  -- counts: one per (site, hour, kind, value), above 0; sign: 1 adds them, -1 takes them away.
  RETURN QUERY
  WITH facts AS (
    SELECT facts.site_id, facts.hour, facts.kind, facts.value, facts.count
      FROM unnest(site_ids, hours, kinds, vals, counts) AS facts (site_id, hour, kind, value, count)
  ),
  -- The hours of a bounded kind that get counts added: taking away needs neither the carry-over nor the room.
  grouped AS (
    SELECT DISTINCT facts.site_id, facts.kind, facts.hour FROM facts WHERE sign > 0 AND facts.kind IN ('hostname', 'page_action')
  ),
  -- The hour before's 100 most counted values: a range of the primary key, read by rank.
  carried AS (
    SELECT grouped.site_id, grouped.kind, grouped.hour, top.value
      FROM grouped
      CROSS JOIN LATERAL (
        SELECT previous.value FROM verification_rollups AS previous
         WHERE previous.site_id = grouped.site_id AND previous.kind = grouped.kind
           AND previous.hour = grouped.hour - interval '1 hour' AND previous.value <> '<other>'
         ORDER BY previous.count DESC, previous.value
         LIMIT 100
      ) AS top
  ),
  -- How many more new values each hour of a bounded kind has room for: its rows of values the hour
  -- before did not carry take it up.
  room AS (
    SELECT grouped.site_id, grouped.kind, grouped.hour, 100 - count(held.value) FILTER (WHERE carried.value IS NULL) AS free
      FROM grouped
      LEFT JOIN verification_rollups AS held
        ON held.site_id = grouped.site_id AND held.kind = grouped.kind AND held.hour = grouped.hour AND held.value <> '<other>'
      LEFT JOIN carried
        ON carried.site_id = held.site_id AND carried.kind = held.kind AND carried.hour = held.hour AND carried.value = held.value
     GROUP BY grouped.site_id, grouped.kind, grouped.hour
  ),
  -- What of each count its value keeps; the rest goes under '<other>'.
  split AS (
    SELECT facts.site_id, facts.hour, facts.kind, facts.value, facts.count,
           CASE WHEN facts.kind NOT IN ('hostname', 'page_action') THEN facts.count
                WHEN sign < 0 THEN least(facts.count, greatest(counted.count, 0))
                WHEN counted.value IS NOT NULL OR carried.value IS NOT NULL THEN facts.count
                WHEN row_number() OVER (PARTITION BY facts.site_id, facts.kind, facts.hour, counted.value IS NULL AND carried.value IS NULL ORDER BY facts.count DESC, facts.value) <= room.free
                  THEN facts.count
                ELSE 0 END AS kept
      FROM facts
      LEFT JOIN verification_rollups AS counted
        ON facts.kind IN ('hostname', 'page_action') AND counted.site_id = facts.site_id AND counted.kind = facts.kind
       AND counted.hour = facts.hour AND counted.value = facts.value
      LEFT JOIN carried
        ON carried.site_id = facts.site_id AND carried.kind = facts.kind AND carried.hour = facts.hour AND carried.value = facts.value
      LEFT JOIN room ON room.site_id = facts.site_id AND room.kind = facts.kind AND room.hour = facts.hour
  )
  SELECT split.site_id, split.hour, split.kind, part.value, (sign * sum(part.count))::bigint
    FROM split
    CROSS JOIN LATERAL (VALUES (split.value, split.kept), ('<other>', split.count - split.kept)) AS part (value, count)
   WHERE part.count <> 0
   GROUP BY split.site_id, split.kind, split.hour, part.value;
END
$fn$;

-- The triggers' statement: as 021's, its counts through verification_rollups_bounded().
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
    SELECT bounded.site_id, bounded.hour, bounded.kind, bounded.value, bounded.count
      FROM (SELECT array_agg(site_id) AS site_ids, array_agg(hour) AS hours, array_agg(kind) AS kinds, array_agg(value) AS vals, array_agg(count) AS counts FROM facts) AS facts
      CROSS JOIN LATERAL verification_rollups_bounded(facts.site_ids, facts.hours, facts.kinds, facts.vals, facts.counts, %2$s) AS bounded
     ORDER BY bounded.site_id, bounded.kind, bounded.hour, bounded.value
    ON CONFLICT (site_id, kind, hour, value) DO UPDATE SET count = rollup.count + excluded.count', source, sign)
$fn$;

-- The hours counted before: beyond their 100 most counted values, a site's hostnames and page
-- actions of an hour are folded into '<other>', so that a flood's hours already counted cost the
-- stats no more than the next ones. As in 021, writers of the log wait until this commits.
-- Measured (npm run bench:stats-flood): 331,522 counts of a site flooded for 23 hours folded into
-- 4,968 in 2.3 s on PostgreSQL 15 and 3.7 s on PGlite.
LOCK TABLE verifications IN SHARE MODE;

-- Only the crowded hours are ranked: finding them reads the two kinds' counts once, in the order
-- of their primary key, and most installations have none.
WITH crowded AS (
  SELECT site_id, kind, hour FROM verification_rollups
   WHERE kind IN ('hostname', 'page_action') AND value <> '<other>'
   GROUP BY site_id, kind, hour
  HAVING count(*) > 100
),
ranked AS (
  SELECT rollup.site_id, rollup.kind, rollup.hour, rollup.value,
         row_number() OVER (PARTITION BY rollup.site_id, rollup.kind, rollup.hour ORDER BY rollup.count DESC, rollup.value) AS rank
    FROM verification_rollups AS rollup
    JOIN crowded ON rollup.site_id = crowded.site_id AND rollup.kind = crowded.kind AND rollup.hour = crowded.hour
   WHERE rollup.value <> '<other>'
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
