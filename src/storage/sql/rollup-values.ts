/**
 * How many distinct values of a visitor-chosen kind ('hostname', 'page_action') the hourly counts
 * keep per site and hour (migration 042). Both come from the visitor: a page action only has to
 * match the SDK's pattern, and a hostname is any subdomain of a listed domain (any host at all for
 * a site without domains), so a flood with a new one per verification made a row of counts per
 * verification, and the stats' reads of whole hours grew with the verifications in them. Values
 * beyond the bound are counted under OTHER_ROLLUP_VALUE: an hour's counts of a kind are at most
 * this many rows plus that one, and their sum stays the hour's verifications. 100 is far more
 * than a site's real pages and forms, and ten times the stats' top lists.
 */
export const ROLLUP_VALUES_PER_HOUR = 100

/**
 * The value the counts beyond ROLLUP_VALUES_PER_HOUR go under. It can be no real value of either
 * kind: a page action matches ^[A-Za-z0-9_/-]{1,32}$, and '<' and '>' are forbidden in a URL's
 * host (WHATWG URL refuses them, percent-encoded too), where '(other)' would be a valid one.
 * Migration 042 and the dashboard (dashboard/src/api/types.ts) spell it the same.
 */
export const OTHER_ROLLUP_VALUE = '<other>'

/** The kinds of hourly counts whose values the visitor chooses, bounded per hour. */
const BOUNDED_KINDS = "('hostname', 'page_action')"

/**
 * The statement that adds (sign 1) or takes away (sign -1) the counts of `facts`, a relation of
 * (site_id, hour, kind, value, count), one row per key, counts above 0, as
 * verification_rollups_statement() of migration 042 does for the log's triggers (the same SQL).
 *
 * Adding: a bounded kind's value is counted as itself when the hour has a row for it already, or
 * while the hour holds fewer than ROLLUP_VALUES_PER_HOUR values (the batch's new values most
 * counted first); otherwise under OTHER_ROLLUP_VALUE. The room is read from the statement's
 * snapshot: writers of the same hour at the same moment (instances) may each fill it, so an hour
 * can hold up to the bound per writer running at once (still a fixed bound, not one per
 * verification); a statement alone never exceeds it.
 *
 * Taking away: a bounded kind's value is lowered by as much as its row holds, the rest from
 * OTHER_ROLLUP_VALUE, so no row goes below zero for a value counted under it. What may drift is
 * only which of the two holds a count, never their sum: a value counted under OTHER_ROLLUP_VALUE
 * and later given a row of its own (the hour had room again after a deletion emptied a value)
 * lowers its own row first; the hour's total, and every count's sign, stay right.
 */
export function addRollupCounts(facts: string, sign: 1 | -1): string {
  const room = `SELECT hours.site_id, hours.kind, hours.hour, ${ROLLUP_VALUES_PER_HOUR} - (
      SELECT count(*) FROM (
        SELECT 1 FROM verification_rollups AS held
         WHERE held.site_id = hours.site_id AND held.kind = hours.kind AND held.hour = hours.hour AND held.value <> '${OTHER_ROLLUP_VALUE}'
         LIMIT ${ROLLUP_VALUES_PER_HOUR}
      ) AS held) AS free
    FROM (SELECT DISTINCT site_id, kind, hour FROM ${facts} WHERE kind IN ${BOUNDED_KINDS}) AS hours`
  const kept =
    sign > 0
      ? `CASE WHEN facts.kind NOT IN ${BOUNDED_KINDS} OR counted.value IS NOT NULL THEN facts.count
              WHEN row_number() OVER (PARTITION BY facts.site_id, facts.kind, facts.hour, counted.value IS NULL ORDER BY facts.count DESC, facts.value) <= room.free THEN facts.count
              ELSE 0 END`
      : `CASE WHEN facts.kind NOT IN ${BOUNDED_KINDS} THEN facts.count ELSE least(facts.count, greatest(counted.count, 0)) END`
  return `INSERT INTO verification_rollups AS rollup (site_id, hour, kind, value, count)
    SELECT site_id, hour, kind, value, sum(count) FROM (
      SELECT split.site_id, split.hour, split.kind, part.value, part.count FROM (
        SELECT facts.site_id, facts.hour, facts.kind, facts.value, facts.count, ${kept} AS kept
          FROM ${facts} AS facts
          LEFT JOIN verification_rollups AS counted
            ON facts.kind IN ${BOUNDED_KINDS} AND counted.site_id = facts.site_id AND counted.kind = facts.kind AND counted.hour = facts.hour AND counted.value = facts.value
          ${sign > 0 ? `LEFT JOIN (${room}) AS room ON room.site_id = facts.site_id AND room.kind = facts.kind AND room.hour = facts.hour` : ''}
      ) AS split
      CROSS JOIN LATERAL (VALUES (split.value, ${sign} * split.kept), ('${OTHER_ROLLUP_VALUE}', ${sign} * (split.count - split.kept))) AS part (value, count)
      WHERE part.count <> 0
    ) AS bounded
    GROUP BY site_id, kind, hour, value
    ORDER BY site_id, kind, hour, value
    ON CONFLICT (site_id, kind, hour, value) DO UPDATE SET count = rollup.count + excluded.count`
}
