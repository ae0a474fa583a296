import { setImmediate } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { createVerificationQueryRepository } from '../storage/sql/verification-query-repository.js'

const DAY_MS = 86_400_000
/** Rows per DELETE: a statement of about 60 ms on PGlite (docs/core-flow.md, section 7). */
const BATCH_SIZE = 5_000
/** The first sweep after start comes soon, so that instances restarted more often than hourly still sweep. */
const FIRST_SWEEP_DELAY_MS = 60_000

export interface LogRetentionOptions {
  /** How often the sweep runs (hourly by default); the first run comes a minute after start, or sooner if the interval is shorter. */
  intervalMs?: number
}

export interface LogRetention {
  /**
   * Deletes the verification log's rows older than LOG_RETENTION_DAYS, for every site, and says
   * how many went; with a retention of 0 it keeps everything. A sweep already under way is joined
   * rather than started twice.
   */
  sweep(now?: Date): Promise<number>
}

declare module 'fastify' {
  interface FastifyInstance {
    logRetention: LogRetention
  }
}

/**
 * Retention of the verification log, which holds client addresses and user agents: rows older
 * than LOG_RETENTION_DAYS (92 by default, the longest range the dashboard's stats show) are
 * deleted a minute after start and every hour, site by site, a batch at a time, with the event
 * loop free between batches.
 * Every instance sweeps; two sweeps at once only delete the same rows once.
 */
async function logRetentionPlugin(app: FastifyInstance, options: LogRetentionOptions): Promise<void> {
  const retentionMs = app.config.logRetentionDays * DAY_MS
  const queries = createVerificationQueryRepository(app.database)
  let running: Promise<number> | undefined
  let isClosing = false

  async function deleteExpired(now: Date): Promise<number> {
    const cutoff = new Date(now.getTime() - retentionMs)
    let deleted = 0
    for (const siteId of await queries.listLoggedSiteIds()) {
      for (;;) {
        if (isClosing) return deleted
        const count = await queries.deleteOlderThan(siteId, cutoff, BATCH_SIZE)
        // Counted batch by batch, so that a sweep that fails halfway still counts what it deleted.
        if (count > 0) app.counters.increment('verificationLogPurged', {}, count)
        deleted += count
        if (count < BATCH_SIZE) break
        await setImmediate()
      }
    }
    return deleted
  }

  const retention: LogRetention = {
    sweep(now = new Date()) {
      if (retentionMs === 0) return Promise.resolve(0)
      running ??= deleteExpired(now)
        .then((deleted) => {
          if (deleted > 0) app.log.info({ deleted, retentionDays: app.config.logRetentionDays }, 'deleted verification log rows past their retention')
          return deleted
        })
        .finally(() => {
          running = undefined
        })
      return running
    },
  }
  app.decorate('logRetention', retention)

  if (retentionMs === 0) return
  const intervalMs = options.intervalMs ?? 3_600_000
  const sweepInBackground = () => {
    retention.sweep().catch((error: unknown) => app.log.warn({ err: error }, 'could not delete old verification log rows; will retry'))
  }
  const firstSweep = setTimeout(sweepInBackground, Math.min(intervalMs, FIRST_SWEEP_DELAY_MS))
  const timer = setInterval(sweepInBackground, intervalMs)
  firstSweep.unref()
  timer.unref()
  app.addHook('onClose', async () => {
    isClosing = true
    clearTimeout(firstSweep)
    clearInterval(timer)
    await running?.catch(() => {})
  })
}

export default fp(logRetentionPlugin, { name: 'log-retention', dependencies: ['storage', 'metrics'] })
