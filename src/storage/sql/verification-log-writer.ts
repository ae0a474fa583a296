import { randomUUID } from 'node:crypto'
import { intervalMs } from '../../domain/analytics/stats-range.js'
import type { ListDecision } from '../../domain/sites/list-decision.js'
import type { BulkColumn, BulkLoad, SqlDatabase } from '../ports.js'
import { addRollupCounts } from './rollup-values.js'

/** One row of the `verifications` table (migrations 003, 004, 021, 023 and 030). */
export interface VerificationLogEntry {
  siteId: string
  challengeId: string | null
  createdAt: Date
  action: 'allow' | 'challenge' | 'block' | 'rejected'
  /** The error code of a rejected submission; null for scored ones. */
  errorCode: string | null
  riskScore: number | null
  anomalies: readonly string[]
  countryCode: string | null
  clientIp: string | null
  hostname: string | null
  /** The page's action ('login') a scored verification came with; null without one, and for rejected submissions. */
  pageAction: string | null
  userAgent: string | null
  difficulty: number | null
  solveTimeMs: number | null
  stepUps: number
  /** The device's ephemeral id on the site (ephemeralIdOf), of a scored verification that described one. */
  device: string | null
  /** The site's list that decided the verdict (allowlist, blocklist); null when the risk model did, and for rejected submissions. */
  decidedBy: ListDecision | null
  /**
   * The row's id: the id of the request it records (its X-Request-Id), so that the reference a
   * turned-away visitor is shown (its first 13 characters) finds the row. One is made up when the
   * row is first written without.
   */
  id?: string
  /**
   * Set when a write of the row is first attempted: an attempt whose answer was lost may have
   * written it, so the next one looks for it before writing it again.
   */
  attempted?: true
}

const MAX_USER_AGENT_LENGTH = 512

const columns: readonly (BulkColumn & { read: (row: VerificationLogEntry) => unknown })[] = [
  { name: 'id', type: 'uuid', read: (row) => row.id },
  { name: 'site_id', type: 'uuid', read: (row) => row.siteId },
  { name: 'challenge_id', type: 'uuid', read: (row) => row.challengeId },
  { name: 'created_at', type: 'timestamptz', read: (row) => row.createdAt.getTime() },
  { name: 'action', type: 'text', read: (row) => row.action },
  { name: 'error_code', type: 'text', read: (row) => row.errorCode },
  { name: 'risk_score', type: 'int2', read: (row) => row.riskScore },
  { name: 'anomalies', type: 'text[]', read: (row) => row.anomalies },
  { name: 'country_code', type: 'text', read: (row) => row.countryCode },
  { name: 'client_ip', type: 'text', read: (row) => row.clientIp },
  { name: 'hostname', type: 'text', read: (row) => row.hostname },
  { name: 'page_action', type: 'text', read: (row) => row.pageAction },
  { name: 'user_agent', type: 'text', read: (row) => row.userAgent?.slice(0, MAX_USER_AGENT_LENGTH) ?? null },
  { name: 'difficulty', type: 'int2', read: (row) => row.difficulty },
  { name: 'solve_time_ms', type: 'int4', read: (row) => row.solveTimeMs },
  { name: 'step_ups', type: 'int2', read: (row) => row.stepUps },
  { name: 'device', type: 'text', read: (row) => row.device },
  { name: 'decided_by', type: 'text', read: (row) => row.decidedBy },
]
const bulkColumns: readonly BulkColumn[] = columns.map(({ name, type }) => ({ name, type }))

/**
 * The rows as one bulk load into `verifications`. A row without an id is given one, and every row
 * is marked attempted: should the load's answer be lost, the next attempt finds out by its id
 * whether the row landed.
 */
export function verificationLoadOf(rows: readonly VerificationLogEntry[]): BulkLoad {
  for (const row of rows) {
    row.id ??= randomUUID()
    row.attempted = true
  }
  return { table: 'verifications', columns: bulkColumns, values: columns.map((column) => rows.map(column.read)) }
}

const HOUR_MS = intervalMs.hour

/** What verification_rollups counts (migrations 007, 017 and 021). */
export type RollupKind = 'action' | 'anomaly' | 'country' | 'score' | 'hostname' | 'page_action'

/** One of the hourly counts of migration 007 (and 017), as verification_rollups keeps them. */
export interface RollupCount {
  siteId: string
  /** The hour's start, in Unix milliseconds. */
  hour: number
  kind: RollupKind
  value: string
  count: number
}

/** The bucket of a risk score, as verification_score_bucket() (migration 017) names it. */
function scoreBucketOf(score: number): string {
  return String(Math.floor(Math.min(Math.max(score, 0), 99) / 10) * 10)
}

/** The counts of one site and hour, by kind then value. */
interface HourCounts {
  siteId: string
  hour: number
  byKind: Record<RollupKind, Map<string, number>>
}

function addOne(counts: Map<string, number>, value: string): void {
  counts.set(value, (counts.get(value) ?? 0) + 1)
}

/**
 * The hourly counts that rows add, exactly as verification_rollups_statement() (migrations 021
 * and 042) counts them in SQL: every row's action; each of its anomaly labels; its country, when
 * known; and, for scored rows only, the score's bucket and the page's hostname and action, when
 * known. Which hostnames and page actions keep a count of their own, and which go under
 * OTHER_ROLLUP_VALUE, only the database can tell (it knows the hour's values): ADD_ROLLUP_COUNTS
 * decides. It runs on the thread that answers requests: the rows of a batch mostly share a site
 * and an hour, so a row looks its hour up only when that changes, and a fact costs one lookup of
 * its value.
 */
export function rollupCountsOf(rows: readonly VerificationLogEntry[]): RollupCount[] {
  const hours = new Map<string, HourCounts>()
  let current: HourCounts | undefined
  for (const row of rows) {
    const hour = Math.floor(row.createdAt.getTime() / HOUR_MS) * HOUR_MS
    if (current === undefined || current.hour !== hour || current.siteId !== row.siteId) {
      const key = `${row.siteId} ${hour}`
      current = hours.get(key)
      if (current === undefined) {
        current = { siteId: row.siteId, hour, byKind: { action: new Map(), anomaly: new Map(), country: new Map(), score: new Map(), hostname: new Map(), page_action: new Map() } }
        hours.set(key, current)
      }
    }
    const { byKind } = current
    addOne(byKind.action, row.action)
    for (const label of row.anomalies) addOne(byKind.anomaly, label)
    if (row.countryCode !== null) addOne(byKind.country, row.countryCode)
    if (row.riskScore === null) continue
    addOne(byKind.score, scoreBucketOf(row.riskScore))
    if (row.hostname !== null) addOne(byKind.hostname, row.hostname)
    if (row.pageAction !== null) addOne(byKind.page_action, row.pageAction)
  }
  const counts: RollupCount[] = []
  for (const { siteId, hour, byKind } of hours.values()) {
    for (const kind of Object.keys(byKind) as RollupKind[]) {
      for (const [value, count] of byKind[kind]) counts.push({ siteId, hour, kind, value, count })
    }
  }
  return counts
}

/**
 * Adds counts to the rollups, and tells the insert trigger (migration 020) that this transaction
 * counts its rows itself: set_config runs for every group of counts (there is at least one, a row's
 * action), which saves the statement of its own that a round trip to PostgreSQL would cost. Groups
 * go in key order, as the trigger's do, so that writers lock rows in one order. The hostnames and
 * page actions beyond an hour's ROLLUP_VALUES_PER_HOUR go under OTHER_ROLLUP_VALUE (addRollupCounts).
 */
const ADD_ROLLUP_COUNTS = `
  WITH counted AS (
    SELECT site_id, timestamptz 'epoch' + hour_ms * interval '1 millisecond' AS hour, kind, value, count
      FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::bigint[]) AS counted (site_id, hour_ms, kind, value, count)
     WHERE set_config('tollgate.rollups_counted', 'on', true) = 'on'
  )
  ${addRollupCounts('counted', 1)}`

/** The rows among `rows` (all attempted, so all with ids) that the log holds already. */
async function findWritten(database: SqlDatabase, rows: readonly VerificationLogEntry[]): Promise<Set<string>> {
  const found = await database.query<{ id: string }>('SELECT id FROM verifications WHERE id = ANY($1::uuid[])', [rows.map((row) => row.id)])
  return new Set(found.map((row) => row.id))
}

/**
 * Writes rows into the verification log with their hourly counts, in one transaction: the rows in
 * one bulk load (a binary COPY on PGlite), the counts added by this writer rather than by the
 * insert trigger (migration 020). A row marked attempted was part of an earlier attempt whose
 * outcome is unknown (its answer lost): if the log holds it, that attempt committed it with its
 * counts, and it is not written again.
 */
export async function appendVerifications(database: SqlDatabase, rows: readonly VerificationLogEntry[]): Promise<void> {
  const tried = rows.filter((row) => row.attempted === true)
  const written = tried.length === 0 ? new Set<string>() : await findWritten(database, tried)
  const fresh = written.size === 0 ? rows : rows.filter((row) => row.attempted !== true || !written.has(row.id ?? ''))
  if (fresh.length === 0) return
  const load = verificationLoadOf(fresh)
  const counts = rollupCountsOf(fresh)
  await database.loadRows(load, [
    {
      sql: ADD_ROLLUP_COUNTS,
      params: [
        counts.map((count) => count.siteId),
        counts.map((count) => count.hour),
        counts.map((count) => count.kind),
        counts.map((count) => count.value),
        counts.map((count) => count.count),
      ],
    },
  ])
}
