import { setImmediate } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { createAuditLogRepository } from '../storage/sql/audit-log-repository.js'
import { createIdempotencyKeyRepository } from '../storage/sql/idempotency-key-repository.js'
import { createSessionRepository } from '../storage/sql/session-repository.js'
import { createSiteRepository } from '../storage/sql/site-repository.js'
import { createSiteverifyCountRepository } from '../storage/sql/siteverify-count-repository.js'
import { createVerificationQueryRepository } from '../storage/sql/verification-query-repository.js'
import { createWebhookDeliveryRepository, deliveryRetention } from '../storage/sql/webhook-delivery-repository.js'

const DAY_MS = 86_400_000
/** Rows per DELETE: a statement of about 60 ms on PGlite (docs/core-flow.md, section 7). */
const BATCH_SIZE = 5_000
/** The first sweep after start comes soon, so that instances restarted more often than hourly still sweep. */
const FIRST_SWEEP_DELAY_MS = 60_000
/** Rows logged just before a deletion reach the database within about a second on every instance (the log's batching); a retried write may take longer, and the hourly sweep catches it. */
const LATE_ROWS_DELAY_MS = 5_000
/** The embedded database is vacuumed after every sweep that deleted rows, and otherwise at most this often. */
const VACUUM_INTERVAL_MS = 3_600_000

export interface LogRetentionOptions {
  /** How often the sweep runs (hourly by default); the first run comes a minute after start, or sooner if the interval is shorter. */
  intervalMs?: number
}

export interface LogRetention {
  /**
   * Deletes the verification log's rows older than LOG_RETENTION_DAYS (none with a retention of
   * 0) and every row of a deleted site, and says how many went. Called while a sweep is under way,
   * it waits for that one and then sweeps again (once for all such callers), so that what it
   * deletes includes whatever was due when it was called.
   */
  sweep(now?: Date): Promise<number>
  /** A sweep in the background; a failure is logged, and the next hourly sweep retries. */
  sweepSoon(): void
  /**
   * After sites are deleted: a sweep now, and another once the rows of their last moments are
   * written (each instance holds what it logs for about a second before it writes it), so that
   * those rows, and the counts their writing adds back to the stats, do not wait for the hour.
   */
  sweepAfterDeletion(): void
}

declare module 'fastify' {
  interface FastifyInstance {
    logRetention: LogRetention
  }
}

/**
 * Retention of the verification log (and of expired log-in sessions, Idempotency-Keys past 24 hours, webhook deliveries past
 * their 30 days and audit events past AUDIT_RETENTION_DAYS), which holds client addresses and user agents: rows older
 * than LOG_RETENTION_DAYS (92 by default, the longest range the dashboard's stats show), and all
 * rows of a deleted site, are deleted a minute after start, every hour and right after a site's
 * deletion, site by site, a batch at a time, with the event loop free between batches. So
 * deleting a site with millions of rows answers at once and never holds the database for long.
 * Every instance sweeps; two sweeps at once only delete the same rows once.
 */
async function logRetentionPlugin(app: FastifyInstance, options: LogRetentionOptions): Promise<void> {
  const retentionMs = app.config.logRetentionDays * DAY_MS
  const auditRetentionMs = app.config.auditRetentionDays * DAY_MS
  const auditLog = createAuditLogRepository(app.database)
  const queries = createVerificationQueryRepository(app.database)
  const sessions = createSessionRepository(app.database)
  const idempotencyKeys = createIdempotencyKeyRepository(app.database)
  const sites = createSiteRepository(app.database)
  const deliveries = createWebhookDeliveryRepository(app.database)
  const siteverifyCounts = createSiteverifyCountRepository(app.database)
  let running: Promise<number> | undefined
  let following: Promise<number> | undefined
  let isClosing = false

  /** Deletes the site's rows, oldest first, before the cutoff (all of them without one). */
  async function deleteRowsOf(siteId: string, cutoff: Date | undefined): Promise<number> {
    let deleted = 0
    for (;;) {
      if (isClosing) return deleted
      const count = await queries.deleteOldest(siteId, BATCH_SIZE, cutoff)
      // Counted batch by batch, so that a sweep that fails halfway still counts what it deleted.
      if (count > 0) app.counters.increment('verificationLogPurged', {}, count)
      deleted += count
      if (count < BATCH_SIZE) return deleted
      await setImmediate()
    }
  }

  /** The audit log's events past AUDIT_RETENTION_DAYS (they hold addresses and user agents too). */
  /**
   * A failure is logged and does not stop the sweep: the verification log's rows are due all the
   * same, and the next sweep retries. Answers how many events went.
   */
  async function deleteAuditEventsBefore(cutoff: Date): Promise<number> {
    let deleted = 0
    try {
      for (;;) {
        if (isClosing) break
        const count = await auditLog.deleteBefore(cutoff, BATCH_SIZE)
        deleted += count
        if (count < BATCH_SIZE) break
        await setImmediate()
      }
    } catch (error) {
      app.log.error({ err: error }, 'could not delete audit events past their retention; the next sweep retries')
    }
    if (deleted > 0) app.log.info({ count: deleted, retentionDays: app.config.auditRetentionDays }, 'deleted audit events past their retention')
    return deleted
  }

  async function deleteDue(now: Date): Promise<number> {
    if (isClosing) return 0
    // Expired log-in sessions hold an address and a User-Agent too; they go with the sweep
    // rather than only at their account's next log-in. Webhook deliveries past their age limit
    // go too: sending prunes a site's own, but a site that stopped sending keeps them otherwise.
    await sessions.deleteExpired()
    // Idempotency keys hold sealed one-time secrets; past their 24 hours they are never replayed.
    await idempotencyKeys.deleteExpired()
    // Replaced webhook secrets past their overlap: sealed secrets that sign nothing any more.
    await sites.clearExpiredPreviousWebhookSecrets()
    const deliveriesExpired = await deliveries.pruneExpired()
    if (deliveriesExpired > 0) {
      app.log.info({ count: deliveriesExpired, maxAgeDays: deliveryRetention.maxAgeDays }, 'deleted webhook deliveries past their age limit')
    }
    const auditEventsExpired = auditRetentionMs > 0 ? await deleteAuditEventsBefore(new Date(now.getTime() - auditRetentionMs)) : 0
    const cutoff = new Date(now.getTime() - retentionMs)
    // Siteverify's hourly counts (migration 022) are kept as long as the log they stand beside.
    const countsExpired = retentionMs > 0 ? await siteverifyCounts.deleteBefore(cutoff) : 0
    if (countsExpired > 0) app.log.info({ count: countsExpired, retentionDays: app.config.logRetentionDays }, 'deleted hourly Siteverify counts past their retention')
    let expired = 0
    let ofDeletedSites = 0
    for (const { siteId, deleted, oldestAt } of await queries.listLoggedSites()) {
      if (deleted) ofDeletedSites += await deleteRowsOf(siteId, undefined)
      // A site with nothing past the retention costs no DELETE: most of a large installation's
      // sites, at every sweep but the one an hour of theirs expires in.
      else if (retentionMs > 0 && oldestAt < cutoff) expired += await deleteRowsOf(siteId, cutoff)
    }
    if (expired + ofDeletedSites > 0) {
      app.log.info({ expired, ofDeletedSites, retentionDays: app.config.logRetentionDays }, 'deleted verification log rows past their retention or of deleted sites')
    }
    const deleted = expired + ofDeletedSites
    if (app.database.kind === 'pglite') await vacuumEmbedded(deleted + auditEventsExpired > 0)
    return deleted
  }

  let lastVacuumAt = Number.NEGATIVE_INFINITY
  /**
   * PGlite runs no autovacuum: without this, the space of deleted log rows (and of the rollups'
   * and counters' updated ones) was never reused, and an embedded data directory that retention
   * should hold steady grew for as long as it ran. After a sweep that deleted rows, and at most
   * hourly otherwise (a site's deletion starts two sweeps, and PGlite holds every other statement
   * while it vacuums); VACUUM skips the pages it found clean before, and ANALYZE keeps the
   * planner's statistics current for the dashboard. A failure is logged; the next sweep retries.
   */
  async function vacuumEmbedded(hasDeleted: boolean): Promise<void> {
    const now = performance.now()
    if (isClosing || (!hasDeleted && now - lastVacuumAt < VACUUM_INTERVAL_MS)) return
    lastVacuumAt = now
    try {
      await app.database.execute('VACUUM (ANALYZE)')
      app.log.debug({ ms: Math.round(performance.now() - now) }, 'vacuumed the embedded database')
    } catch (error) {
      app.log.warn({ err: error }, 'could not vacuum the embedded database; the next sweep retries')
    }
  }

  function start(now: Date | undefined): Promise<number> {
    const sweep = deleteDue(now ?? new Date()).finally(() => {
      running = undefined
    })
    running = sweep
    return sweep
  }

  const retention: LogRetention = {
    sweep(now) {
      if (running === undefined) return start(now)
      following ??= running
        .catch(() => undefined)
        .then(() => {
          following = undefined
          return start(now)
        })
      return following
    },
    sweepSoon() {
      retention.sweep().catch((error: unknown) => app.log.warn({ err: error }, 'could not delete verification log rows; the next sweep retries'))
    },
    sweepAfterDeletion() {
      retention.sweepSoon()
      const late = setTimeout(() => {
        lateSweeps.delete(late)
        if (!isClosing) retention.sweepSoon()
      }, LATE_ROWS_DELAY_MS)
      late.unref()
      lateSweeps.add(late)
    },
  }
  const lateSweeps = new Set<NodeJS.Timeout>()
  app.decorate('logRetention', retention)

  // Even with a retention of 0 (rows kept for ever), deleted sites' rows are swept: a restart
  // may have cut short the sweep that followed a deletion.
  const intervalMs = options.intervalMs ?? 3_600_000
  const firstSweep = setTimeout(() => retention.sweepSoon(), Math.min(intervalMs, FIRST_SWEEP_DELAY_MS))
  const timer = setInterval(() => retention.sweepSoon(), intervalMs)
  firstSweep.unref()
  timer.unref()
  app.addHook('onClose', async () => {
    isClosing = true
    clearTimeout(firstSweep)
    clearInterval(timer)
    for (const late of lateSweeps) clearTimeout(late)
    await Promise.all([running?.catch(() => {}), following?.catch(() => {})])
  })
}

export default fp(logRetentionPlugin, { name: 'log-retention', dependencies: ['storage', 'metrics'] })
