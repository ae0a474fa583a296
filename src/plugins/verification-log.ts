import { setImmediate } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Gauge } from 'prom-client'
import { canonicalAddress, truncateAddress } from '../domain/network/address-forms.js'
import { testOutcomeOf } from '../domain/sites/test-site-keys.js'
import { appendVerifications, type VerificationLogEntry } from '../storage/sql/verification-log-writer.js'
import { trackFailingWrites } from './failing-writes.js'
import { writeAtShutdown } from './storage.js'

export type { VerificationLogEntry }

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
   * Rows per write (default 500); a batch this large is also written at once instead of waiting
   * for the interval. A write's fixed cost (a transaction, the rollups' statement) is shared by
   * its rows (bench/README.md, "Core flow").
   */
  batchSize?: number
  /** Rows kept while the database is unreachable; beyond this the oldest are dropped (and logged). */
  maxBufferedRows?: number
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
  let writing: Promise<undefined> = Promise.resolve(undefined)

  /** Keeps the newest maxBufferedRows rows; says so when older ones had to go. */
  function keepWithinBound(): void {
    if (buffer.length <= maxBufferedRows) return
    // A hundredth more than needed, so that a database that stays away costs one cut per
    // thousand rows rather than one per row.
    const dropped = buffer.length - maxBufferedRows + Math.ceil(maxBufferedRows / 100)
    buffer = buffer.slice(dropped)
    app.log.error({ dropped }, 'verification log buffer full; dropped the oldest rows')
    app.counters.increment('verificationLogDropped', { reason: 'buffer_full' }, dropped)
  }

  /**
   * Inserts a batch; a batch with a row the database refuses (a bug upstream) is inserted row by
   * row, so that the one row is dropped and not the rows around it. Returns the rows not written
   * when a write fails for another reason (the database went away), so that exactly those are
   * tried again.
   */
  async function insertBatch(batch: readonly VerificationLogEntry[]): Promise<{ error: unknown; unwritten: readonly VerificationLogEntry[] } | undefined> {
    try {
      await appendVerifications(app.database, batch)
      return undefined
    } catch (error) {
      if (!isDataError(error)) return { error, unwritten: batch }
    }
    for (const [index, row] of batch.entries()) {
      try {
        await appendVerifications(app.database, [row])
      } catch (error) {
        if (!isDataError(error)) return { error, unwritten: batch.slice(index) }
        app.log.error({ err: error, row }, 'dropped a verification log row the database refuses')
        app.counters.increment('verificationLogDropped', { reason: 'refused' })
      }
    }
    return undefined
  }

  /**
   * Writes batches while at least `minimumRows` rows wait, and at most `limit` rows. A full batch
   * starts a write at once (minimumRows = batchSize), and that write must leave the rows that
   * arrive meanwhile for the next full batch or the interval: draining them too would turn a busy
   * log into a stream of small INSERTs (measured: 25 rows each at 4,400 verifications/s), each
   * paying a statement's fixed cost. For the same reason the interval writes the rows that waited
   * when it fired (limit), not those that arrive while it writes them. Shutdown writes everything.
   */
  async function writeBuffered(minimumRows: number, limit: number): Promise<number> {
    let left = limit
    let written = 0
    while (buffer.length >= minimumRows && left > 0) {
      // Let waiting requests run between batches (PGlite would otherwise chain them back to back).
      await setImmediate()
      const batch = buffer.slice(0, Math.min(batchSize, left))
      left -= batch.length
      buffer = buffer.slice(batch.length)
      rowsInFlight = batch.length
      const failure = await insertBatch(batch).finally(() => (rowsInFlight = 0))
      if (failure === undefined) {
        lastLandedAt = performance.now()
        written += batch.length
      }
      if (failure !== undefined) {
        // Keep the rows for the next attempt, in order, within the bound.
        buffer = [...failure.unwritten, ...buffer]
        keepWithinBound()
        throw failure.error
      }
    }
    return written
  }

  const write = (minimumRows: number, limit = Number.POSITIVE_INFINITY): Promise<number> => {
    // Writes run one after another: a slow batch never overlaps the next, and order is kept.
    const next = writing.then(() => writeBuffered(minimumRows, limit))
    // The next write waits for this one, failed or not; its caller hears how it went.
    writing = next.then(
      () => undefined,
      () => undefined,
    )
    return next
  }
  const flush = async () => {
    await write(1)
  }
  const failures = trackFailingWrites(app.log, {
    failed: 'could not write the verification log',
    pending: { field: 'bufferedRows', words: 'rows buffered' },
    recovered: (written) => `verification log written again (${written} rows)`,
  })
  const writeInBackground = (minimumRows: number, limit?: number) => {
    write(minimumRows, limit).then(
      (written) => {
        if (written > 0) failures.succeeded(written)
      },
      (error: unknown) => failures.failed(error, buffer.length + rowsInFlight),
    )
  }

  new Gauge({
    name: 'tollgate_verification_log_buffered_rows',
    help: 'Verification log rows waiting in this instance to be written to the database; past 100000 the oldest are dropped.',
    registers: [app.metrics.registry],
    collect() {
      this.set(buffer.length + rowsInFlight)
    },
  })

  // Cut here, after scoring: the risk model, the rate limits and the history saw the whole address.
  // Either way in one spelling, so that a visitor's filter and erasure find all of their rows.
  const logged = app.config.logClientIp === 'truncated' ? truncateAddress : canonicalAddress
  const log: VerificationLog = {
    record(entry) {
      // A test site key's verifications belong to no site (and the table's site must exist).
      if (testOutcomeOf(entry.siteId) !== undefined) return
      buffer.push(entry.clientIp === null ? entry : { ...entry, clientIp: logged(entry.clientIp) })
      if (buffer.length === batchSize) writeInBackground(batchSize)
      // A write that hangs (not one that fails) leaves rows piling up here; the bound holds too.
      else if (buffer.length > maxBufferedRows) keepWithinBound()
    },
    flush,
  }
  app.decorate('verificationLog', log)

  const timer = setInterval(() => {
    if (buffer.length > 0) writeInBackground(1, buffer.length)
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

export default fp(verificationLogPlugin, { name: 'verification-log', dependencies: ['storage', 'metrics'] })
