import type { BucketCount, StatsAction, StatsRange } from '../../domain/analytics/stats-range.js'
import { intervalMs } from '../../domain/analytics/stats-range.js'
import type { LabelReason, LabelSource, VerificationLabel } from '../../domain/feedback/verification-label.js'
import type { ListDecision } from '../../domain/sites/list-decision.js'
import type { SqlExecutor } from '../ports.js'
import { DECIDED_BY_SQL } from './decided-by.js'
import { CREATED_AT_MICROS, newestFirstPage, where, type PageFilter, type PagePosition } from './keyset.js'
import { addRollupCounts } from './rollup-values.js'
import type { RollupKind } from './verification-log-writer.js'

/** One row of the verification log as the dashboard shows it. */
export interface LogEntry {
  id: string
  siteId: string
  createdAt: Date
  /** created_at to the microsecond, for the page cursor. */
  createdAtMicros: number
  action: StatsAction
  errorCode: string | null
  riskScore: number | null
  anomalies: string[]
  countryCode: string | null
  clientIp: string | null
  hostname: string | null
  /** The page's action ('login') a scored verification came with. */
  pageAction: string | null
  userAgent: string | null
  difficulty: number | null
  solveTimeMs: number | null
  /** The device's ephemeral id on the site, of a scored verification that described one (migration 023). */
  device: string | null
  /** Siteverify's metadata.verification_id: the challenge the row's token came from (null for rejected rows). */
  verificationId: string | null
  /** What the site's backend or its operator said of it later (migration 028), or null. */
  label: VerificationLabel | null
  labelReason: LabelReason | null
  labelNote: string | null
  labeledAt: Date | null
  labelSource: LabelSource | null
  /**
   * The site's list that decided the verdict (migration 030), or null: the risk model (or nothing, for rejected rows) did.
   * A blocklisted row logged before 030 is the blocklist's by its anomalies (DECIDED_BY_SQL).
   */
  decidedBy: ListDecision | null
}

interface LogRow {
  id: string
  site_id: string
  created_at: Date
  created_at_micros: number
  action: StatsAction
  error_code: string | null
  risk_score: number | null
  anomalies: string[]
  country_code: string | null
  client_ip: string | null
  hostname: string | null
  page_action: string | null
  user_agent: string | null
  difficulty: number | null
  solve_time_ms: number | null
  device: string | null
  challenge_id: string | null
  feedback_label: VerificationLabel | null
  feedback_reason: LabelReason | null
  feedback_note: string | null
  feedback_at: Date | null
  feedback_source: LabelSource | null
  decided_by: ListDecision | null
}

function toLogEntry(row: LogRow): LogEntry {
  return {
    id: row.id,
    siteId: row.site_id,
    createdAt: row.created_at,
    createdAtMicros: row.created_at_micros,
    action: row.action,
    errorCode: row.error_code,
    riskScore: row.risk_score,
    anomalies: row.anomalies,
    countryCode: row.country_code,
    clientIp: row.client_ip,
    hostname: row.hostname,
    pageAction: row.page_action,
    userAgent: row.user_agent,
    difficulty: row.difficulty,
    solveTimeMs: row.solve_time_ms,
    device: row.device,
    verificationId: row.action === 'rejected' ? null : row.challenge_id,
    label: row.feedback_label,
    labelReason: row.feedback_reason,
    labelNote: row.feedback_note,
    labeledAt: row.feedback_at,
    labelSource: row.feedback_source,
    decidedBy: row.decided_by,
  }
}

export interface LogPageQuery extends PagePosition {
  action?: string
  /** Only the rows whose ids lie in this range (those a reference names: idRangeOf). */
  ids?: { first: string; last: string }
  /** Only the rows of this device (its ephemeral id). */
  device?: string
  /** Only the rows of this visitor address, under any of these texts in lower case (addressFormsOf), compared in lower case. */
  clientIps?: readonly string[]
  /**
   * Only the row with this id, or the scored row Siteverify named so (metadata.verification_id: the
   * challenge's id), lower case: a webhook's data.verificationId is the row's id, Siteverify's the challenge's.
   */
  verificationId?: string
  /** Only the rows labeled so, or ('none') those without a label. */
  label?: VerificationLabel | 'none'
  /** Only the rows the site's list decided so (a blocklisted row logged before 030 too, by its anomalies). */
  decidedBy?: ListDecision
}

export interface RankedCount {
  label: string
  count: number
}

const HOUR_MS = 3_600_000

/** A site with rows in the verification log. */
export interface LoggedSite {
  siteId: string
  /** The site no longer exists: its rows are left over from before its deletion. */
  deleted: boolean
  /** When its oldest row was created: a sweep leaves alone a site with nothing older than its cutoff. */
  oldestAt: Date
}

/**
 * A stats range split for the two sources: the whole UTC hours within it, read from the hourly
 * rollups (migrations 007 and 017), and the parts of an hour at either end, read from the log
 * itself. Parameters $1-$5 of every stats query: site, from, first whole hour, end of the last
 * whole hour, to. With no whole hour inside the range, both hour bounds are `to` and the log
 * covers it all.
 *
 * A range that ends now or later takes the hour it ends in from the rollups too: nothing is logged
 * after now, so that hour's count so far is all of it. The log's own rows are read only for a part
 * of an hour the caller cut off on purpose: a busy site's current hour (tens of thousands of
 * rows) made every "last 24 hours" read cost in proportion to its traffic.
 */
export function statsParameters(siteId: string, range: StatsRange, now = Date.now()): [string, Date, Date, Date, Date] {
  const firstHour = Math.ceil(range.from.getTime() / HOUR_MS) * HOUR_MS
  const endsNow = range.endsNow === true || range.to.getTime() >= now
  const endHour = (endsNow ? Math.ceil : Math.floor)(range.to.getTime() / HOUR_MS) * HOUR_MS
  const [wholeFrom, wholeTo] = firstHour < endHour ? [new Date(firstHour), new Date(endHour)] : [range.to, range.to]
  return [siteId, range.from, wholeFrom, wholeTo, range.to]
}

/** The kinds of hourly counts read by label (migrations 007 and 017); 'action' is read by bucket. */
type RankedKind = Exclude<RollupKind, 'action'>

const inWholeHours = 'site_id = $1 AND hour >= $3 AND hour < $4'
const inPartialHours = 'site_id = $1 AND ((created_at >= $2 AND created_at < $3) OR (created_at >= $4 AND created_at < $5))'

/** The conditions of a query's filters (an undefined one is left out), for newestFirstPage. */
function filtersOf(query: Omit<LogPageQuery, keyof PagePosition>): (PageFilter | undefined)[] {
  return [
    query.action === undefined ? undefined : where('action = ?', query.action),
    // The primary key's range: the rows a reference names are found without reading the others.
    query.ids === undefined ? undefined : where('id BETWEEN ?::uuid AND ?::uuid', query.ids.first, query.ids.last),
    query.device === undefined ? undefined : where('device = ?', query.device),
    // No index: a site's rows are read in its order until the page is full (or, erasing, all of them); such requests are rare.
    // In lower case: a row logged before the log canonicalised addresses may hold a proxy's capitals.
    query.clientIps === undefined ? undefined : where('lower(client_ip) = ANY(?::text[])', query.clientIps),
    // Either arm is indexed, the planner combining them (a BitmapOr): the primary key, and the
    // partial index verifications_site_challenge (migration 028), its predicate repeated so that it serves it.
    query.verificationId === undefined
      ? undefined
      : where("(id = ?::uuid OR (challenge_id = ?::uuid AND challenge_id IS NOT NULL AND action <> 'rejected'))", query.verificationId, query.verificationId),
    query.label === undefined ? undefined : query.label === 'none' ? where('feedback_label IS NULL') : where('feedback_label = ?', query.label),
    // The expression verifications_site_decided_time (migration 041) is built on: a range of it, newest first.
    query.decidedBy === undefined ? undefined : where(`${DECIDED_BY_SQL} = ?`, query.decidedBy),
  ]
}

/** Every kind of hourly count (migration 021's CHECK): named, so that a site's hours are ranges of the counts' primary key. */
const ROLLUP_KINDS = "('action', 'anomaly', 'country', 'score', 'hostname', 'page_action')"

/** The hourly counts' facts of the rows of `source`, each as verification_rollups_statement() (migration 021) counts it. */
function rollupFactsOf(source: string): string {
  const hour = "date_bin('1 hour', created_at, timestamptz 'epoch')"
  return `SELECT ${hour} AS hour, 'action' AS kind, action AS value FROM ${source}
    UNION ALL SELECT ${hour}, 'anomaly', anomaly FROM ${source} CROSS JOIN LATERAL unnest(anomalies) AS anomaly
    UNION ALL SELECT ${hour}, 'country', country_code FROM ${source} WHERE country_code IS NOT NULL
    UNION ALL SELECT ${hour}, 'score', verification_score_bucket(risk_score) FROM ${source} WHERE risk_score IS NOT NULL
    UNION ALL SELECT ${hour}, 'hostname', hostname FROM ${source} WHERE hostname IS NOT NULL AND risk_score IS NOT NULL
    UNION ALL SELECT ${hour}, 'page_action', page_action FROM ${source} WHERE page_action IS NOT NULL AND risk_score IS NOT NULL`
}

/**
 * deleteOldest's statement ($1 the site, $2 the limit, `before` the cutoff's condition on $3 or
 * nothing): a batch of the site's oldest rows deleted with their hourly counts, which it takes
 * away itself rather than leave them to the delete trigger's dynamic statement (migration 041:
 * three quarters of a 5,000-row batch on a large log, and a fixed cost per statement).
 *
 * The rows go oldest first, so once a batch is deleted none of the site's rows older than its
 * newest is left (a later sweep's, or another instance's, took the rest): the hours from the
 * batch's first up to its last are empty, and their counts are deleted whole (a range of the
 * counts' primary key per kind, instead of a count per row). The last hour keeps the rows from
 * the batch's newest on, so its counts are lowered by the batch's rows in it, as the trigger
 * would (a hostname or page action counted under OTHER_ROLLUP_VALUE lowers that one:
 * addRollupCounts, migration 042); the trigger then removes those that reached 0. set_config
 * tells it the rows are counted (for the statement: it turns the setting off again); it runs in
 * an InitPlan of the rows' own selection, so even a batch that finds nothing sets it.
 *
 * A row written late into an hour already emptied (the writer's retries of a lost answer, hours
 * later at most) by a transaction that commits during the batch may lose its count with the
 * hour's; the next sweep deletes the row itself, long past the retention, so it drifts for an
 * hour at most.
 */
function deleteOldestCounted(before: string): string {
  return `WITH counting AS MATERIALIZED (SELECT set_config('tollgate.rollup_deletes_counted', 'on', true) AS flag),
    gone AS (
      -- id = ANY(ARRAY(...)) deletes through the primary key; id IN (SELECT ...) lets the
      -- planner pick a hash join that reads the whole table for every batch.
      DELETE FROM verifications
       WHERE id = ANY (ARRAY(
         SELECT id FROM verifications WHERE (SELECT flag FROM counting) = 'on' AND site_id = $1 ${before} ORDER BY created_at LIMIT $2
       ))
      RETURNING created_at, action, anomalies, country_code, risk_score, hostname, page_action
    ),
    span AS (
      SELECT date_bin('1 hour', min(created_at), timestamptz 'epoch') AS first_hour, date_bin('1 hour', max(created_at), timestamptz 'epoch') AS last_hour FROM gone
    ),
    emptied AS (
      DELETE FROM verification_rollups AS rollup USING span
       WHERE rollup.site_id = $1 AND rollup.kind IN ${ROLLUP_KINDS} AND rollup.hour >= span.first_hour AND rollup.hour < span.last_hour
    ),
    in_last_hour AS (SELECT gone.* FROM gone CROSS JOIN span WHERE gone.created_at >= span.last_hour),
    last_hour_counts AS (
      SELECT $1::uuid AS site_id, hour, kind, value, count(*) AS count FROM (${rollupFactsOf('in_last_hour')}) AS facts GROUP BY kind, hour, value
    ),
    lowered AS (${addRollupCounts('last_hour_counts', -1)})
    SELECT count(*)::int8 AS count FROM gone`
}

/**
 * Reads of the verification log (written by the verification flow). Every query starts with
 * site_id and a created_at range or order, so it runs on the (site_id, [action,] created_at, id)
 * indexes of migration 003 however long the log grows; stats read whole hours from the rollups,
 * so their cost grows with the hours asked for, not with the verifications in them.
 */
export function createVerificationQueryRepository(database: SqlExecutor) {
  /**
   * Counts of one rollup kind over the range, by label: whole hours plus the log's partial ones.
   * `partialLabels` must count the log's rows as the kind's trigger does (migrations 007, 017).
   */
  const countedQuery = (kind: RankedKind, partialLabels: string) =>
    `SELECT label, sum(count)::int8 AS count FROM (
       SELECT value AS label, count FROM verification_rollups WHERE kind = '${kind}' AND ${inWholeHours}
       UNION ALL
       SELECT ${partialLabels}
     ) AS counted
     GROUP BY label`
  const rankedQuery = (kind: RankedKind, partialLabels: string) => `${countedQuery(kind, partialLabels)} ORDER BY count DESC, label LIMIT $6`

  /** A page of the rows `scope` selects, filtered by `query`, with `extraColumns` besides a LogEntry's. */
  const selectPage = async <Row extends LogRow>(scope: PageFilter, query: LogPageQuery, extraColumns = ''): Promise<Row[]> => {
    const { sql, params } = newestFirstPage(
      `SELECT id, site_id, created_at, ${CREATED_AT_MICROS}, action, error_code,
              risk_score, anomalies, country_code, client_ip, hostname, page_action, user_agent, difficulty, solve_time_ms, device,
              challenge_id, feedback_label, feedback_reason, feedback_note, feedback_at, feedback_source, ${DECIDED_BY_SQL} AS decided_by${extraColumns}
         FROM verifications`,
      [scope, ...filtersOf(query)],
      query,
    )
    return database.query<Row>(sql, params)
  }

  return {
    /**
     * The site's scored verifications (allowed, challenged or blocked; not the rejected ones, which
     * cost nothing to send) in the UTC hour of `now` and in the one before, from the rollups: one
     * range of their primary key.
     */
    async scoredInRecentHours(siteId: string, now: number): Promise<{ current: number; previous: number }> {
      const currentHour = Math.floor(now / HOUR_MS) * HOUR_MS
      const rows = await database.query<{ hour_ms: number; count: number }>(
        `SELECT (extract(epoch FROM hour) * 1000)::int8 AS hour_ms, sum(count)::int8 AS count FROM verification_rollups
          WHERE site_id = $1 AND kind = 'action' AND hour >= $2 AND hour <= $3 AND value IN ('allow', 'challenge', 'block')
          GROUP BY hour`,
        [siteId, new Date(currentHour - HOUR_MS), new Date(currentHour)],
      )
      const countAt = (hourMs: number) => rows.find((row) => row.hour_ms === hourMs)?.count ?? 0
      return { current: countAt(currentHour), previous: countAt(currentHour - HOUR_MS) }
    },

    /**
     * Each of the sites' verifications, and the blocked ones, from the UTC hour `from` on, from the
     * hourly action counts alone: one statement for all the sites, one primary-key range per site.
     * Sites with none are left out.
     */
    async recentTotalsOf(siteIds: readonly string[], from: Date): Promise<{ siteId: string; total: number; blocked: number }[]> {
      if (siteIds.length === 0) return []
      const rows = await database.query<{ site_id: string; total: number; blocked: number }>(
        `SELECT site_id, sum(count)::int8 AS total, (sum(count) FILTER (WHERE value = 'block'))::int8 AS blocked FROM verification_rollups
          WHERE site_id = ANY($1::uuid[]) AND kind = 'action' AND hour >= $2
          GROUP BY site_id`,
        [siteIds, from],
      )
      return rows.map((row) => ({ siteId: row.site_id, total: row.total, blocked: row.blocked ?? 0 }))
    },

    /** Counts per UTC bucket (epoch milliseconds) and action. */
    async countByBucket(siteId: string, range: StatsRange): Promise<BucketCount[]> {
      const rows = await database.query<{ bucket_ms: number; action: string; count: number }>(
        `SELECT (floor(extract(epoch FROM time) * 1000 / $6) * $6)::int8 AS bucket_ms, action, sum(count)::int8 AS count FROM (
           SELECT hour AS time, value AS action, count FROM verification_rollups WHERE kind = 'action' AND ${inWholeHours}
           UNION ALL
           SELECT created_at, action, 1 FROM verifications WHERE ${inPartialHours}
         ) AS counted
         GROUP BY 1, 2`,
        [...statsParameters(siteId, range), intervalMs[range.interval]],
      )
      return rows.map((row) => ({ bucketMs: row.bucket_ms, action: row.action, count: row.count }))
    },

    async topAnomalies(siteId: string, range: StatsRange, limit: number): Promise<RankedCount[]> {
      return database.query<RankedCount>(
        // The unnested anomaly is named apart from the rankedQuery's own label alias.
        rankedQuery('anomaly', `anomaly, 1 FROM verifications CROSS JOIN LATERAL unnest(anomalies) AS anomaly WHERE ${inPartialHours}`),
        [...statsParameters(siteId, range), limit],
      )
    },

    async topCountries(siteId: string, range: StatsRange, limit: number): Promise<RankedCount[]> {
      return database.query<RankedCount>(
        rankedQuery('country', `country_code, 1 FROM verifications WHERE ${inPartialHours} AND country_code IS NOT NULL`),
        [...statsParameters(siteId, range), limit],
      )
    },

    /** The scored verifications' hostnames (a rejected submission's is anyone's to make up, for free). */
    async topHostnames(siteId: string, range: StatsRange, limit: number): Promise<RankedCount[]> {
      return database.query<RankedCount>(
        rankedQuery('hostname', `hostname, 1 FROM verifications WHERE ${inPartialHours} AND hostname IS NOT NULL AND risk_score IS NOT NULL`),
        [...statsParameters(siteId, range), limit],
      )
    },

    /** The scored verifications' page actions ('login', 'signup'), as the hostnames. */
    async topPageActions(siteId: string, range: StatsRange, limit: number): Promise<RankedCount[]> {
      return database.query<RankedCount>(
        rankedQuery('page_action', `page_action, 1 FROM verifications WHERE ${inPartialHours} AND page_action IS NOT NULL AND risk_score IS NOT NULL`),
        [...statsParameters(siteId, range), limit],
      )
    },

    /**
     * Counts per bucket of ten of the risk score ('0' for 0-9, ... '90' for 90-100), of the
     * scored verifications only (rejected submissions have no score); buckets without any are
     * left out.
     */
    async countByScoreBucket(siteId: string, range: StatsRange): Promise<RankedCount[]> {
      return database.query<RankedCount>(
        countedQuery('score', `verification_score_bucket(risk_score), 1 FROM verifications WHERE ${inPartialHours} AND risk_score IS NOT NULL`),
        statsParameters(siteId, range),
      )
    },

    /**
     * One page of the log, newest first, after the cursor (keyset pagination: the cost of a page
     * does not grow with its depth). The SQL is assembled from fixed fragments only, so each
     * variant gets a plan that can use the index matching its filter.
     */
    async listPage(siteId: string, query: LogPageQuery): Promise<LogEntry[]> {
      return (await selectPage(where('site_id = ?', siteId), query)).map(toLogEntry)
    },

    /**
     * The rows of any of the account's sites, and of those shared with it (not of deleted ones),
     * whose ids lie in the range, as listPage's, each with its site's name: a reference looked up
     * without knowing the site it was shown on. The range of the primary key finds them among
     * every site's rows.
     */
    async listAccountPage(
      accountId: string,
      query: LogPageQuery & { ids: { first: string; last: string }; siteIds?: readonly string[] | undefined; withoutSiteIds?: readonly string[] },
    ): Promise<(LogEntry & { siteName: string })[]> {
      const visible = 'site_id IN (SELECT sites.id FROM sites WHERE sites.account_id = ? UNION ALL SELECT site_members.site_id FROM site_members WHERE site_members.account_id = ?)'
      // siteIds (an API key's list) narrows the account's sites further; withoutSiteIds (those
      // closed to it until it turns two-factor on) leaves some out.
      const narrowed = query.siteIds === undefined ? where(visible, accountId, accountId) : where(`${visible} AND site_id = ANY(?::uuid[])`, accountId, accountId, query.siteIds)
      const without = query.withoutSiteIds ?? []
      const rows = await selectPage<LogRow & { site_name: string }>(
        without.length === 0 ? narrowed : where(`${narrowed.condition} AND site_id <> ALL(?::uuid[])`, ...narrowed.values, without),
        query,
        ', (SELECT sites.name FROM sites WHERE sites.id = verifications.site_id) AS site_name',
      )
      return rows.map((row) => ({ ...toLogEntry(row), siteName: row.site_name }))
    },

    /**
     * The sites that have rows in the log, whether each has since been deleted (its rows are then
     * deleted whatever their age) and when its oldest row was created: a loose index scan (one
     * probe of the site_id index per site, and one of verifications_site_time for its oldest row),
     * so its cost does not grow with the rows.
     */
    async listLoggedSites(): Promise<LoggedSite[]> {
      const rows = await database.query<{ site_id: string; deleted: boolean; oldest_at: Date }>(
        `WITH RECURSIVE logged AS (
           (SELECT site_id FROM verifications ORDER BY site_id LIMIT 1)
           UNION ALL
           SELECT (SELECT site_id FROM verifications WHERE site_id > logged.site_id ORDER BY site_id LIMIT 1)
             FROM logged WHERE logged.site_id IS NOT NULL
         )
         SELECT site_id, NOT EXISTS (SELECT 1 FROM sites WHERE sites.id = logged.site_id) AS deleted,
                (SELECT min(created_at) FROM verifications WHERE verifications.site_id = logged.site_id) AS oldest_at
           FROM logged WHERE site_id IS NOT NULL`,
      )
      return rows.map((row) => ({ siteId: row.site_id, deleted: row.deleted, oldestAt: row.oldest_at }))
    },

    /**
     * Deletes up to `limit` of the site's rows created before `cutoff` (all of them, for a deleted
     * site, without one), oldest first, with their hourly counts, and says how many went: a sweep
     * calls it until it deletes fewer than the limit, so that no single statement holds the
     * database (or PGlite's worker) for long, however many rows the site has.
     *
     * The statement counts its rows itself (deleteOldestCounted), as the log's writer counts its
     * inserts, and the delete trigger only removes the counts that reached 0 (migration 041).
     */
    async deleteOldest(siteId: string, limit: number, cutoff?: Date): Promise<number> {
      const [row] = await database.query<{ count: number }>(
        deleteOldestCounted(cutoff === undefined ? '' : 'AND created_at < $3'),
        cutoff === undefined ? [siteId, limit] : [siteId, limit, cutoff],
      )
      return row?.count ?? 0
    },

    /**
     * Deletes every row of the site that `filter` selects (a visitor's erasure) and says how many
     * went: in batches of `batchSize` through the primary key, as deleteOldest. Their hourly counts
     * go down with them (the log's delete trigger, migration 021), so the stats stay those of the
     * rows kept. Run in a transaction, it deletes all of them or none.
     */
    async deleteMatching(siteId: string, filter: Pick<LogPageQuery, 'clientIps' | 'device'>, batchSize = 1000): Promise<number> {
      let deleted = 0
      for (;;) {
        const { sql, params } = newestFirstPage('SELECT id FROM verifications', [where('site_id = ?', siteId), ...filtersOf(filter)], { limit: batchSize })
        const [row] = await database.query<{ count: number }>(
          `WITH gone AS (DELETE FROM verifications WHERE id = ANY (ARRAY(${sql})) RETURNING 1) SELECT count(*)::int8 AS count FROM gone`,
          params,
        )
        const count = row?.count ?? 0
        deleted += count
        if (count < batchSize) return deleted
      }
    },

    /**
     * At a site's deletion: its hourly counts, at once, so that nothing of its stats outlives it.
     * Its log rows follow in batches (LogRetention), and their delete trigger finds no counts left
     * to lower (the counts it makes go below zero are removed by the same trigger).
     */
    async deleteRollupsOf(siteId: string): Promise<void> {
      // The rows are locked in key order first, the order in which the log's insert trigger
      // locks them: a plain DELETE locks in scan order, which with two instances writing the
      // site's log at the same moment closes a cycle (a deadlock, and the deletion answered 500).
      await database.query(
        `DELETE FROM verification_rollups
          WHERE (site_id, kind, hour, value) IN (
            SELECT site_id, kind, hour, value FROM verification_rollups WHERE site_id = $1
             ORDER BY site_id, kind, hour, value FOR UPDATE
          )`,
        [siteId],
      )
    },
  }
}

export type VerificationQueryRepository = ReturnType<typeof createVerificationQueryRepository>
