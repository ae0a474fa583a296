import { randomUUID } from 'node:crypto'
import { setImmediate } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { testOutcomeOf } from '../domain/sites/test-site-keys.js'
import type { SqlDatabase } from '../storage/ports.js'
import { writeAtShutdown } from './storage.js'

/** One row of the `verifications` table (migrations 003 and 004). */
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
  userAgent: string | null
  difficulty: number | null
  solveTimeMs: number | null
  stepUps: number
  /**
   * The row's id, given when the row is first written: a batch tried again after a failure keeps
   * its ids, so rows that the failed attempt did commit (its answer lost) are not written twice.
   */
  id?: string
}

export interface VerificationLog {
  /** Queues a row; it reaches the database within about a second, never on the response path. */
  record(entry: VerificationLogEntry): void
  /** Writes every queued row now. */
  flush(): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    verificationLog: VerificationLog
  }
}

export interface VerificationLogOptions {
  flushIntervalMs?: number
  /**
   * Rows per INSERT (default 500); a batch this large is also written at once instead of waiting
   * for the interval. A statement's fixed cost is shared by its rows: on PGlite, which runs in a
   * worker thread of its own, a row costs about 41 µs of CPU in batches of 100 and 23 µs in
   * batches of 500 (bench/README.md, "Core flow").
   */
  batchSize?: number
  /** Rows kept while the database is unreachable; beyond this the oldest are dropped (and logged). */
  maxBufferedRows?: number
}

const MAX_USER_AGENT_LENGTH = 512

/**
 * One multi-row INSERT per batch: columns travel as parallel arrays and unnest() turns them into
 * rows, so a batch of any size is one statement with 15 parameters. Rows are identified by their
 * ids (given here when they have none): a row already written is skipped, not written again. Anomalies travel comma-joined
 * (labels are snake_case words) because unnest() would flatten a two-dimensional array. The
 * rows' hourly counts for the stats follow by trigger (migration 007, verification_rollups).
 * Exported for bench/stats, which measures this statement.
 */
export async function insertRows(database: SqlDatabase, rows: readonly VerificationLogEntry[]): Promise<void> {
  const column = <T>(read: (row: VerificationLogEntry) => T): T[] => rows.map(read)
  await database.query(
    `INSERT INTO verifications (id, site_id, challenge_id, created_at, action, error_code, risk_score, anomalies,
       country_code, client_ip, hostname, user_agent, difficulty, solve_time_ms, step_ups)
     SELECT id, site_id, challenge_id, created_at, action, error_code, risk_score,
       string_to_array(anomalies, ','), country_code, client_ip, hostname, user_agent, difficulty, solve_time_ms, step_ups
     FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[], $5::text[], $6::text[], $7::smallint[], $8::text[],
       $9::text[], $10::text[], $11::text[], $12::text[], $13::smallint[], $14::integer[], $15::smallint[])
       AS batch (id, site_id, challenge_id, created_at, action, error_code, risk_score, anomalies,
         country_code, client_ip, hostname, user_agent, difficulty, solve_time_ms, step_ups)
     ON CONFLICT (id) DO NOTHING`,
    [
      rows.map((row) => (row.id ??= randomUUID())),
      column((row) => row.siteId),
      column((row) => row.challengeId),
      column((row) => row.createdAt.toISOString()),
      column((row) => row.action),
      column((row) => row.errorCode),
      column((row) => row.riskScore),
      column((row) => row.anomalies.join(',')),
      column((row) => row.countryCode),
      column((row) => row.clientIp),
      column((row) => row.hostname),
      column((row) => row.userAgent?.slice(0, MAX_USER_AGENT_LENGTH) ?? null),
      column((row) => row.difficulty),
      column((row) => row.solveTimeMs),
      column((row) => row.stepUps),
    ],
  )
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity violation): retrying cannot help. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && /^2[23]/.test(code)
}

/**
 * The verification log, written in batches off the response path: rows wait in memory and are
 * inserted every second (or at once when a batch fills), and at shutdown. Registered after the
 * storage plugin, so its onClose (which writes what is left) runs before the stores close.
 */
async function verificationLogPlugin(app: FastifyInstance, options: VerificationLogOptions): Promise<void> {
  const batchSize = options.batchSize ?? 500
  const maxBufferedRows = options.maxBufferedRows ?? 100_000
  let buffer: VerificationLogEntry[] = []
  /** Rows of the batch being written, out of the buffer until the write ends. */
  let rowsInFlight = 0
  /** performance.now() when a batch last landed. */
  let lastLandedAt = 0
  let writing: Promise<void> = Promise.resolve()

  /** Keeps the newest maxBufferedRows rows; says so when older ones had to go. */
  function keepWithinBound(): void {
    if (buffer.length <= maxBufferedRows) return
    // A hundredth more than needed, so that a database that stays away costs one cut per
    // thousand rows rather than one per row.
    const dropped = buffer.length - maxBufferedRows + Math.ceil(maxBufferedRows / 100)
    buffer = buffer.slice(dropped)
    app.log.error({ dropped }, 'verification log buffer full; dropped the oldest rows')
  }

  /**
   * Inserts a batch; a batch with a row the database refuses (a bug upstream) is inserted row by
   * row, so that the one row is dropped and not the rows around it. Returns the rows not written
   * when a write fails for another reason (the database went away), so that exactly those are
   * tried again.
   */
  async function insertBatch(batch: readonly VerificationLogEntry[]): Promise<{ error: unknown; unwritten: readonly VerificationLogEntry[] } | undefined> {
    try {
      await insertRows(app.database, batch)
      return undefined
    } catch (error) {
      if (!isDataError(error)) return { error, unwritten: batch }
    }
    for (const [index, row] of batch.entries()) {
      try {
        await insertRows(app.database, [row])
      } catch (error) {
        if (!isDataError(error)) return { error, unwritten: batch.slice(index) }
        app.log.error({ err: error, row }, 'dropped a verification log row the database refuses')
      }
    }
    return undefined
  }

  /**
   * Writes batches while at least `minimumRows` rows wait. A full batch starts a write at once
   * (minimumRows = batchSize), and that write must leave the rows that arrive meanwhile for the
   * next full batch or the interval: draining them too would turn a busy log into a stream of
   * small INSERTs (measured: 25 rows each at 4,400 verifications/s), each paying a statement's
   * fixed cost. The interval and shutdown write everything (minimumRows = 1).
   */
  async function writeBuffered(minimumRows: number): Promise<void> {
    while (buffer.length >= minimumRows) {
      // Let waiting requests run between batches (PGlite would otherwise chain them back to back).
      await setImmediate()
      const batch = buffer.slice(0, batchSize)
      buffer = buffer.slice(batch.length)
      rowsInFlight = batch.length
      const failure = await insertBatch(batch).finally(() => (rowsInFlight = 0))
      if (failure === undefined) lastLandedAt = performance.now()
      if (failure !== undefined) {
        // Keep the rows for the next attempt, in order, within the bound.
        buffer = [...failure.unwritten, ...buffer]
        keepWithinBound()
        throw failure.error
      }
    }
  }

  const write = (minimumRows: number): Promise<void> => {
    // Writes run one after another: a slow batch never overlaps the next, and order is kept.
    writing = writing.catch(() => {}).then(() => writeBuffered(minimumRows))
    return writing
  }
  const flush = () => write(1)
  const writeInBackground = (minimumRows: number) => {
    write(minimumRows).catch((error: unknown) => app.log.warn({ err: error }, 'could not write the verification log; will retry'))
  }

  const log: VerificationLog = {
    record(entry) {
      // A test site key's verifications belong to no site (and the table's site must exist).
      if (testOutcomeOf(entry.siteId) !== undefined) return
      buffer.push(entry)
      if (buffer.length === batchSize) writeInBackground(batchSize)
      // A write that hangs (not one that fails) leaves rows piling up here; the bound holds too.
      else if (buffer.length > maxBufferedRows) keepWithinBound()
    },
    flush,
  }
  app.decorate('verificationLog', log)

  const timer = setInterval(() => {
    if (buffer.length > 0) writeInBackground(1)
  }, options.flushIntervalMs ?? 1_000)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await writeAtShutdown(app, 'verification log rows', {
      flush,
      countUnwritten: () => buffer.length,
      countInFlight: () => rowsInFlight,
      lastLandedAt: () => lastLandedAt,
    })
  })
}

export default fp(verificationLogPlugin, { name: 'verification-log', dependencies: ['storage'] })
