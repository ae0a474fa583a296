/**
 * How many distinct values of a visitor-chosen kind ('hostname', 'page_action') the hourly counts
 * keep per site and hour as new ones (migration 042), and how many of the hour before's most counted
 * values it carries over besides. Both kinds come from the visitor: a page action only has to
 * match the SDK's pattern, and a hostname is any subdomain of a listed domain (any host at all for
 * a site without domains), so a flood with a new one per verification made a row of counts per
 * verification, and the stats' reads of whole hours grew with the verifications in them. A value
 * is counted as itself when its hour has a row for it, when it is one of the hour before's this
 * many most counted (the carry-over: a flood of made-up values at the start of an hour cannot
 * send the site's real pages and forms under OTHER_ROLLUP_VALUE for the rest of it), or while the
 * hour holds fewer than this many values not so carried; otherwise under OTHER_ROLLUP_VALUE. What
 * a flood can still send there is a real value new in its hour that first comes after the flood.
 * An hour's counts of a kind are at most twice this many rows plus that one (per writer at once),
 * and their sum stays the hour's verifications. 100 is far more than a site's real pages and
 * forms, and ten times the stats' top lists. Migration 042's verification_rollups_bounded()
 * applies it (tests check that it is this one).
 */
export const ROLLUP_VALUES_PER_HOUR = 100

/**
 * The value the counts beyond ROLLUP_VALUES_PER_HOUR go under. It can be no real value of either
 * kind: a page action matches ^[A-Za-z0-9_/-]{1,32}$, and '<' and '>' are forbidden in a URL's
 * host (WHATWG URL refuses them, percent-encoded too), where '(other)' would be a valid one.
 * Migration 042 and the dashboard (dashboard/src/api/types.ts) spell it the same.
 */
export const OTHER_ROLLUP_VALUE = '<other>'

/**
 * The statement that adds (sign 1) or takes away (sign -1) the counts of `facts`, a relation of
 * (site_id, hour, kind, value, count), one row per key, counts above 0, as the log's triggers do
 * (verification_rollups_statement(), migration 042): verification_rollups_bounded() decides which
 * value each count goes under, and the rows are locked in key order, as every writer of the
 * counts locks them.
 *
 * Adding, a hostname or page action is counted as itself when its hour has a row for it already,
 * when it is one of the hour before's ROLLUP_VALUES_PER_HOUR most counted of its site and kind, or
 * while the hour holds fewer than ROLLUP_VALUES_PER_HOUR values not so carried (the statement's new
 * values most counted first); otherwise under OTHER_ROLLUP_VALUE. The room is read from the
 * statement's snapshot: writers of the same hour at the same moment (instances) may each fill it,
 * so an hour can hold up to the bound of new values per writer running at once, besides the
 * carried ones (still a fixed bound, not one per verification); a statement alone never exceeds it.
 *
 * Taking away, a value's row is lowered by as much as it holds, the rest from OTHER_ROLLUP_VALUE,
 * so a deleted row that was counted under it never makes a count below zero. What may drift is
 * which of the two holds a count, and, when two deletions of one hour run at the same moment
 * (both read the same counts), their sum until the hour is deleted whole: a value counted under OTHER_ROLLUP_VALUE
 * that later got a row of its own (its hour had room again after a deletion emptied a value)
 * lowers its own row first.
 */
export function addRollupCounts(facts: string, sign: 1 | -1): string {
  return `INSERT INTO verification_rollups AS rollup (site_id, hour, kind, value, count)
    SELECT bounded.site_id, bounded.hour, bounded.kind, bounded.value, bounded.count
      FROM (SELECT array_agg(site_id) AS site_ids, array_agg(hour) AS hours, array_agg(kind) AS kinds, array_agg(value) AS vals, array_agg(count) AS counts FROM ${facts}) AS facts
      CROSS JOIN LATERAL verification_rollups_bounded(facts.site_ids, facts.hours, facts.kinds, facts.vals, facts.counts, ${sign}) AS bounded
     ORDER BY bounded.site_id, bounded.kind, bounded.hour, bounded.value
    ON CONFLICT (site_id, kind, hour, value) DO UPDATE SET count = rollup.count + excluded.count`
}
