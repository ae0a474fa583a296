import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { lastHourOf } from '../domain/history/client-history.js'
import { RecentCache } from '../domain/recent-cache.js'
import { answersWithin } from '../storage/answers-within.js'
import { createVerificationQueryRepository } from '../storage/sql/verification-query-repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    siteTraffic: SiteTraffic
  }
}

export interface SiteTraffic {
  /**
   * The site's scored verifications in the last hour, fleet-wide (every instance's log is in the
   * database's hourly counts), as read at most a minute ago. 0 while it is unknown.
   */
  scoredInLastHour(siteId: string): Promise<number>
}

/** How long a site's counts are used before they are read again (in the background). */
const FRESH_MS = 60_000
/** How long the first read of a site's counts may hold its verification up; 0 is used after that. */
const FIRST_READ_WAIT_MS = 250
/** Sites whose counts are kept (a RecentCache: those in use stay). */
const REMEMBERED_SITES = 10_000

interface Reading {
  counts: { current: number; previous: number }
  readAt: number
}

/**
 * The traffic of a site, for the limits that scale with it (fingerprintClientLimitFor). It is
 * asked for rarely, only when a fingerprint has come from many addresses, so it is read from the
 * verification log's hourly counts on demand, never on every request: once per site and minute
 * at most, in the background while a reading of the minute before is there.
 */
async function siteTrafficPlugin(app: FastifyInstance): Promise<void> {
  const queries = createVerificationQueryRepository(app.database)
  const readings = new RecentCache<string, Reading>(REMEMBERED_SITES)
  const reading = new Map<string, Promise<Reading | undefined>>()
  let failing = false

  const read = (siteId: string): Promise<Reading | undefined> => {
    let pending = reading.get(siteId)
    if (pending === undefined) {
      const readAt = Date.now()
      pending = queries.scoredInRecentHours(siteId, readAt).then(
        (counts) => {
          const fresh = { counts, readAt }
          readings.set(siteId, fresh)
          if (failing) app.log.info('site traffic is read again')
          failing = false
          return fresh
        },
        (error: unknown) => {
          if (!failing) app.log.warn({ err: error, siteId }, "could not read a site's traffic; its fingerprints are held to the fixed limit until it can")
          failing = true
          return undefined
        },
      ).finally(() => reading.delete(siteId))
      reading.set(siteId, pending)
    }
    return pending
  }

  app.decorate('siteTraffic', {
    async scoredInLastHour(siteId: string): Promise<number> {
      let known = readings.get(siteId)
      if (known === undefined) known = await answersWithin(read(siteId), FIRST_READ_WAIT_MS).catch(() => undefined)
      else if (Date.now() - known.readAt >= FRESH_MS) void read(siteId)
      return known === undefined ? 0 : lastHourOf(known.counts, known.readAt)
    },
  })
}

export default fp(siteTrafficPlugin, { name: 'site-traffic', dependencies: ['storage'] })
