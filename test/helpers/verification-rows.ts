import { randomUUID } from 'node:crypto'
import type { App } from '../../src/app.js'
import type { SqlExecutor } from '../../src/storage/ports.js'
import type { VerificationLogEntry } from '../../src/storage/sql/verification-log-writer.js'

export interface VerificationRow {
  id?: string
  siteId: string
  createdAt: Date
  action: 'allow' | 'challenge' | 'block' | 'rejected'
  riskScore?: number | null
  anomalies?: string[]
  countryCode?: string | null
  hostname?: string | null
  pageAction?: string | null
  errorCode?: string | null
  userAgent?: string | null
  clientIp?: string | null
  device?: string | null
  /** The challenge it redeemed, Siteverify's verification_id: a row with one may be labeled. */
  challengeId?: string | null
}

/** The columns a row may leave out, written only when some row has them, and how each is read from a row. */
const laterColumns = [
  ['page_action', (row: VerificationRow) => row.pageAction],
  ['user_agent', (row: VerificationRow) => row.userAgent],
  ['client_ip', (row: VerificationRow) => row.clientIp],
  ['device', (row: VerificationRow) => row.device],
  ['challenge_id', (row: VerificationRow) => row.challengeId],
] as const

/** How a column is read from the text arrays: as itself, but where its type takes no text. */
const selectedColumn = (column: string) => (column === 'anomalies' ? "string_to_array(anomalies, ',')" : column === 'challenge_id' ? 'challenge_id::uuid' : column)

/**
 * Writes rows into the verification log as the verification flow would, in one statement
 * (unnest of parallel arrays), so tests can fill it with thousands of rows quickly. The later
 * columns (laterColumns: the page action's of migration 021, the device's of 023) are written only
 * when a row has them, so that rows go into the log of a database migrated to an earlier version too.
 */
export async function insertVerifications(database: SqlExecutor, rows: readonly VerificationRow[]): Promise<string[]> {
  const ids = rows.map((row) => row.id ?? randomUUID())
  const optional = laterColumns.filter(([, valueOf]) => rows.some((row) => valueOf(row) !== undefined))
  const columns = ['id', 'site_id', 'created_at', 'action', 'risk_score', 'anomalies', 'country_code', 'error_code', 'hostname', ...optional.map(([column]) => column)]
  const types = ['uuid', 'uuid', 'timestamptz', 'text', 'smallint', 'text', 'text', 'text', 'text']
  const selected = columns.map(selectedColumn)
  for (let start = 0; start < rows.length; start += 10_000) {
    const chunk = rows.slice(start, start + 10_000)
    const values = [
      ids.slice(start, start + 10_000),
      chunk.map((row) => row.siteId),
      chunk.map((row) => row.createdAt.toISOString()),
      chunk.map((row) => row.action),
      chunk.map((row) => (row.riskScore === undefined ? (row.action === 'rejected' ? null : 10) : row.riskScore)),
      chunk.map((row) => (row.anomalies ?? []).join(',')),
      chunk.map((row) => row.countryCode ?? null),
      chunk.map((row) => row.errorCode ?? (row.action === 'rejected' ? 'solution_invalid' : null)),
      chunk.map((row) => row.hostname ?? null),
      ...optional.map(([, valueOf]) => chunk.map((row) => valueOf(row) ?? null)),
    ]
    await database.query(
      `INSERT INTO verifications (${columns.join(', ')})
       SELECT ${selected.join(', ')}
         FROM unnest(${columns.map((_, index) => `$${index + 1}::${types[index] ?? 'text'}[]`).join(', ')}) AS input(${columns.join(', ')})`,
      values,
    )
  }
  return ids
}

/** A sample row as the verification log's writer takes it. */
export function logEntryOf(row: VerificationRow): VerificationLogEntry {
  return {
    siteId: row.siteId,
    challengeId: null,
    createdAt: row.createdAt,
    action: row.action,
    errorCode: row.action === 'rejected' ? 'solution_invalid' : null,
    riskScore: row.riskScore ?? null,
    anomalies: row.anomalies ?? [],
    countryCode: row.countryCode ?? null,
    clientIp: null,
    hostname: row.hostname ?? null,
    pageAction: row.pageAction ?? null,
    userAgent: null,
    difficulty: null,
    solveTimeMs: null,
    stepUps: 0,
    device: null,
    decidedBy: null,
  }
}

/** The columns of a verification's row in the log that tests of the flow read back. */
export interface LoggedVerification {
  action: string
  risk_score: number
  anomalies: string[]
  country_code: string
  client_ip: string
}

/** The log's row of the verification of a challenge, once the log has written what it buffers. */
export async function readLoggedVerification(app: App, challengeId: string): Promise<LoggedVerification | undefined> {
  await app.verificationLog.flush()
  const rows = await app.database.query<LoggedVerification>(
    'SELECT action, risk_score, anomalies, country_code, client_ip FROM verifications WHERE challenge_id = $1',
    [challengeId],
  )
  return rows[0]
}
