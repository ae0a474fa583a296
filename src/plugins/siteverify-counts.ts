import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { createSiteverifyCountRepository, type SiteverifyCount } from '../storage/sql/siteverify-count-repository.js'
import { writeAtShutdown } from './storage.js'

/** How a site's tokens fare at Siteverify, per hour (migration 022); the stats API reads them. */
export interface SiteverifyCounts {
  /** Counts one redemption of a site's token: 'success' or the error code it got. */
  count(siteId: string, outcome: string, now?: number): void
  /** Adds every count held to the database now. */
  flush(): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    siteverifyCounts: SiteverifyCounts
  }
}

export interface SiteverifyCountsOptions {
  /** How often the counts are added to the database (5 s by default). */
  flushIntervalMs?: number
}

const HOUR_MS = 3_600_000
/** Counts kept while the database is away: a key per site, hour and outcome, so thousands of sites' hours. */
const MAX_HELD_KEYS = 100_000

/**
 * Siteverify's outcomes per site and hour, counted in memory on the request path (a Map increment)
 * and added to the database every few seconds and at shutdown. Counts a write could not add stay
 * for the next one (a write that failed after it landed would count them twice, a smaller harm for
 * a statistic than losing them); beyond MAX_HELD_KEYS new keys are not counted until a write lands.
 */
async function siteverifyCountsPlugin(app: FastifyInstance, options: SiteverifyCountsOptions): Promise<void> {
  const repository = createSiteverifyCountRepository(app.database)
  /** Counts by `${siteId} ${hourMs} ${outcome}`. */
  let held = new Map<string, number>()
  let inFlight = 0
  let lastLandedAt = 0
  let writing: Promise<void> = Promise.resolve()
  let isFull = false

  const writeHeld = async (): Promise<void> => {
    if (held.size === 0) return
    const batch = held
    held = new Map()
    inFlight = batch.size
    const counts: SiteverifyCount[] = [...batch].map(([key, count]) => {
      const [siteId = '', hourMs = '0', outcome = ''] = key.split(' ')
      return { siteId, hourMs: Number(hourMs), outcome, count }
    })
    try {
      await repository.add(counts)
      lastLandedAt = performance.now()
      isFull = false
    } catch (error) {
      for (const [key, count] of batch) held.set(key, (held.get(key) ?? 0) + count)
      throw error
    } finally {
      inFlight = 0
    }
  }
  const flush = (): Promise<void> => {
    writing = writing.catch(() => {}).then(writeHeld)
    return writing
  }

  const counts: SiteverifyCounts = {
    count(siteId, outcome, now = Date.now()) {
      const key = `${siteId} ${Math.floor(now / HOUR_MS) * HOUR_MS} ${outcome}`
      const current = held.get(key)
      if (current === undefined && held.size >= MAX_HELD_KEYS) {
        if (!isFull) app.log.warn({ keys: held.size }, 'Siteverify counts are not written and too many are held; new ones are not counted until a write lands')
        isFull = true
        return
      }
      held.set(key, (current ?? 0) + 1)
    },
    flush,
  }
  app.decorate('siteverifyCounts', counts)

  let failing = false
  const timer = setInterval(() => {
    flush().then(
      () => {
        if (failing) app.log.info('Siteverify counts are written again')
        failing = false
      },
      (error: unknown) => {
        if (!failing) app.log.warn({ err: error }, 'could not write Siteverify counts; will retry')
        failing = true
      },
    )
  }, options.flushIntervalMs ?? 5_000)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    // A statistic gets a second, not two: the log, the counters and a webhook delivery need the rest of the grace.
    await writeAtShutdown(app, 'Siteverify counts (site, hour and outcome)', {
      flush,
      countUnwritten: () => held.size,
      countInFlight: () => inFlight,
      lastLandedAt: () => lastLandedAt,
    }, 1_000)
  })
}

export default fp(siteverifyCountsPlugin, { name: 'siteverify-counts', dependencies: ['storage'] })
