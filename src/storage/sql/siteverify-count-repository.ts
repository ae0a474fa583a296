import type { SqlExecutor } from '../ports.js'

/** One hour's count of one outcome of a site's tokens at Siteverify ('success' or an error code). */
export interface SiteverifyCount {
  siteId: string
  /** The UTC hour, epoch milliseconds. */
  hourMs: number
  outcome: string
  count: number
}

/**
 * The outcome counted beside a success whose remoteip was outside the address that earned the
 * token, on a site whose tokenAddressCheck is report: not a refusal (the success is counted too).
 */
export const REPORTED_MISMATCH_OUTCOME = 'remoteip-mismatch-reported'

/** Siteverify's outcomes per site and hour (migration 022). Plain SQL that runs alike on PostgreSQL and PGlite. */
export function createSiteverifyCountRepository(database: SqlExecutor) {
  return {
    /**
     * Adds the counts to the stored ones, in one statement. Counts of a site deleted meanwhile are
     * dropped (the join); the sites joined are locked against deletion first (FOR KEY SHARE), so
     * that a deletion's cascade and this statement's foreign-key checks never wait on each other
     * in a cycle. Rows are written in key order, as every instance writes them, so that two
     * instances' flushes never do either.
     */
    async add(counts: readonly SiteverifyCount[]): Promise<void> {
      if (counts.length === 0) return
      const sorted = [...counts].sort((a, b) => a.siteId.localeCompare(b.siteId) || a.hourMs - b.hourMs || a.outcome.localeCompare(b.outcome))
      await database.query(
        `INSERT INTO siteverify_counts AS stored (site_id, hour, outcome, count)
         SELECT counted.site_id, to_timestamp(counted.hour_ms / 1000.0), counted.outcome, counted.count
           FROM unnest($1::uuid[], $2::int8[], $3::text[], $4::int8[]) WITH ORDINALITY AS counted (site_id, hour_ms, outcome, count, position)
           JOIN sites ON sites.id = counted.site_id
          ORDER BY counted.position
            FOR KEY SHARE OF sites
         ON CONFLICT (site_id, hour, outcome) DO UPDATE SET count = stored.count + excluded.count`,
        [sorted.map((count) => count.siteId), sorted.map((count) => count.hourMs), sorted.map((count) => count.outcome), sorted.map((count) => count.count)],
      )
    },

    /** The site's counts by outcome over the UTC hours that overlap [from, to). */
    async countsOf(siteId: string, from: Date, to: Date): Promise<{ outcome: string; count: number }[]> {
      return database.query<{ outcome: string; count: number }>(
        `SELECT outcome, sum(count)::int8 AS count FROM siteverify_counts
          WHERE site_id = $1 AND hour > $2::timestamptz - interval '1 hour' AND hour < $3
          GROUP BY outcome ORDER BY count DESC, outcome`,
        [siteId, from, to],
      )
    },

    /** When counting began (migration 022): the hours before it have no counts. */
    async countingStartedAt(): Promise<Date> {
      const [row] = await database.query<{ started_at: Date }>('SELECT started_at FROM siteverify_counting')
      return row?.started_at ?? new Date(0)
    },

    /** Deletes the hours that ended before the cutoff (the log's retention); says how many rows went. */
    async deleteBefore(cutoff: Date): Promise<number> {
      const [row] = await database.query<{ count: number }>(
        `WITH gone AS (DELETE FROM siteverify_counts WHERE hour <= $1::timestamptz - interval '1 hour' RETURNING 1)
         SELECT count(*)::int8 AS count FROM gone`,
        [cutoff],
      )
      return row?.count ?? 0
    },
  }
}

export type SiteverifyCountRepository = ReturnType<typeof createSiteverifyCountRepository>
