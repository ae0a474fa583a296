/**
 * The list that decided a row of the verification log, as SQL: its decided_by (migration 030), or
 * for a row logged before it (or by an older instance during a rolling upgrade) 'blocklist' when
 * its anomalies say so (address_blocked, country_blocked: judgeForBlocklisted always sets one, and
 * the risk model never does). The allowlist's older rows, allows at 0 with no anomaly, cannot be
 * told from the model's: null. The log's rows, its decidedBy filter and the feedback figures all
 * read this one expression, so that a row counted in byList.blocklist is one the filter finds.
 * Migration 041 indexes it (verifications_site_decided_time), written out again there: a change
 * here needs a migration that rebuilds that index, or the filter reads every row of the site.
 */
export const DECIDED_BY_SQL =
  "coalesce(decided_by, CASE WHEN anomalies && ARRAY['address_blocked', 'country_blocked']::text[] THEN 'blocklist' END)"
