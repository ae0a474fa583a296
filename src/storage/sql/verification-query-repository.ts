import type { LogCursor } from '../../domain/analytics/log-cursor.js'
import type { BucketCount, StatsRange } from '../../domain/analytics/stats-range.js'
import { intervalMs } from '../../domain/analytics/stats-range.js'
import type { SqlExecutor } from '../ports.js'

/** One row of the verification log as the dashboard shows it. */
export interface LogEntry {
  id: string
  createdAt: Date
  /** created_at to the microsecond, for the page cursor. */
  createdAtMicros: number
  action: string
  errorCode: string | null
  riskScore: number | null
  anomalies: string[]
  countryCode: string | null
  clientIp: string | null
  hostname: string | null
  userAgent: string | null
  difficulty: number | null
  solveTimeMs: number | null
}

interface LogRow {
  id: string
  created_at: Date
  created_at_micros: number
  action: string
  error_code: string | null
  risk_score: number | null
  anomalies: string[]
  country_code: string | null
  client_ip: string | null
  hostname: string | null
  user_agent: string | null
  difficulty: number | null
  solve_time_ms: number | null
}

function toLogEntry(row: LogRow): LogEntry {
  return {
    id: row.id,
    createdAt: row.created_at,
    createdAtMicros: row.created_at_micros,
    action: row.action,
    errorCode: row.error_code,
    riskScore: row.risk_score,
    anomalies: row.anomalies,
    countryCode: row.country_code,
    clientIp: row.client_ip,
    hostname: row.hostname,
    userAgent: row.user_agent,
    difficulty: row.difficulty,
    solveTimeMs: row.solve_time_ms,
  }
}

export interface LogPageQuery {
  limit: number
  action?: string
  after?: LogCursor
}

export interface RankedCount {
  label: string
  count: number
}

/**
 * Reads of the verification log (written by the verification flow). Every query starts with
 * site_id and a created_at range or order, so it runs on the (site_id, [action,] created_at, id)
 * indexes of migration 003 however long the log grows.
 */
export function createVerificationQueryRepository(database: SqlExecutor) {
  const inRange = 'site_id = $1 AND created_at >= $2 AND created_at < $3'

  return {
    /** Counts per UTC bucket (epoch milliseconds) and action. */
    async countByBucket(siteId: string, range: StatsRange): Promise<BucketCount[]> {
      const rows = await database.query<{ bucket_ms: number; action: string; count: number }>(
        `SELECT (floor(extract(epoch FROM created_at) * 1000 / $4) * $4)::int8 AS bucket_ms, action, count(*)::int8 AS count
           FROM verifications WHERE ${inRange}
          GROUP BY 1, 2`,
        [siteId, range.from, range.to, intervalMs[range.interval]],
      )
      return rows.map((row) => ({ bucketMs: row.bucket_ms, action: row.action, count: row.count }))
    },

    async topAnomalies(siteId: string, range: StatsRange, limit: number): Promise<RankedCount[]> {
      return database.query<RankedCount>(
        `SELECT label, count(*)::int8 AS count
           FROM verifications CROSS JOIN LATERAL unnest(anomalies) AS label
          WHERE ${inRange}
          GROUP BY label ORDER BY count DESC, label LIMIT $4`,
        [siteId, range.from, range.to, limit],
      )
    },

    async topCountries(siteId: string, range: StatsRange, limit: number): Promise<RankedCount[]> {
      return database.query<RankedCount>(
        `SELECT country_code AS label, count(*)::int8 AS count
           FROM verifications
          WHERE ${inRange} AND country_code IS NOT NULL
          GROUP BY country_code ORDER BY count DESC, country_code LIMIT $4`,
        [siteId, range.from, range.to, limit],
      )
    },

    /**
     * One page of the log, newest first, after the cursor (keyset pagination: the cost of a page
     * does not grow with its depth). The SQL is assembled from fixed fragments only, so each
     * variant gets a plan that can use the index matching its filter.
     */
    async listPage(siteId: string, query: LogPageQuery): Promise<LogEntry[]> {
      const params: unknown[] = [siteId]
      const conditions = ['site_id = $1']
      if (query.action !== undefined) {
        params.push(query.action)
        conditions.push(`action = $${params.length}`)
      }
      if (query.after !== undefined) {
        params.push(query.after.createdAtMicros, query.after.id)
        const micros = `$${params.length - 1}`
        const id = `$${params.length}`
        conditions.push(`(created_at, id) < (timestamptz 'epoch' + ${micros}::int8 * interval '1 microsecond', ${id}::uuid)`)
      }
      params.push(query.limit)
      const rows = await database.query<LogRow>(
        `SELECT id, created_at, (extract(epoch FROM created_at) * 1000000)::int8 AS created_at_micros, action, error_code,
                risk_score, anomalies, country_code, client_ip, hostname, user_agent, difficulty, solve_time_ms
           FROM verifications
          WHERE ${conditions.join(' AND ')}
          ORDER BY created_at DESC, id DESC
          LIMIT $${params.length}`,
        params,
      )
      return rows.map(toLogEntry)
    },

    async deleteBySite(siteId: string): Promise<void> {
      await database.query('DELETE FROM verifications WHERE site_id = $1', [siteId])
    },
  }
}

export type VerificationQueryRepository = ReturnType<typeof createVerificationQueryRepository>
