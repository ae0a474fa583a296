import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { RecentCache } from '../domain/recent-cache.js'
import type { Site } from '../domain/sites/site.js'
import type { Unsubscribe } from '../storage/ports.js'
import { createSiteRepository, type SiteRepository } from '../storage/sql/site-repository.js'
import { isOutage } from './error-handler.js'

declare module 'fastify' {
  interface FastifyInstance {
    sites: SiteRepository
    siteCache: SiteCache
  }
}

const INVALIDATION_CHANNEL = 'sites:invalidated'
const SUBSCRIBE_WAIT_MS = 3_000
const CACHE_TTL_MS = 30_000
const ANNOUNCE_RETRY_MS = 500

interface CachedSite {
  site: Site
  expiresAt: number
}

export interface SiteCache {
  /** The site with this public key, from memory when fresh: the public routes' hot path. */
  findBySiteKey(siteKey: string): Promise<Site | undefined>
  /**
   * What findBySiteKey would answer from memory, without the database: the site, null for a key
   * known to be unknown, undefined when only the database can tell.
   */
  peekBySiteKey(siteKey: string): Site | null | undefined
  findById(id: string): Promise<Site | undefined>
  /** Drops the site from every instance's cache; call after any change to it. */
  invalidate(site: Pick<Site, 'id'>): Promise<void>
}

/** Unknown keys and ids are remembered briefly, and at most this many of each generation (RecentCache). */
const UNKNOWN_CAPACITY = 10_000
const UNKNOWN_TTL_MS = 5_000

/**
 * Sites are read on every public request, so each instance keeps them in memory for a short
 * while. A change is announced on a Redis channel and every instance drops its copy at once;
 * the TTL bounds staleness should an announcement be missed (e.g. during a Redis outage).
 */
async function sitesPlugin(app: FastifyInstance): Promise<void> {
  const repository = createSiteRepository(app.database)
  // Known sites by public key and by id, apart (a public key chosen to look like an id must not
  // shadow the id's entry), and apart from the unknown ones, whose memory is bounded so that a
  // flood of made-up keys cannot push the real sites out.
  const known = { byKey: new Map<string, CachedSite>(), byId: new Map<string, CachedSite>() }
  const unknown = { byKey: new RecentCache<string, number>(UNKNOWN_CAPACITY), byId: new RecentCache<string, number>(UNKNOWN_CAPACITY) }
  // Bumped by every invalidation: a load that was under way meanwhile may have read the old row,
  // so its answer serves its own caller but is not kept.
  let invalidations = 0

  const dropSite = (id: string) => {
    invalidations++
    known.byId.delete(id)
    for (const [key, entry] of known.byKey) if (entry.site.id === id) known.byKey.delete(key)
  }
  // Announcements made while this instance's subscription was down (or not yet up) are lost: once
  // it is back, everything in memory may be stale (a deleted site, a rotated-out secret), so it all goes.
  const dropAll = () => {
    invalidations++
    known.byKey.clear()
    known.byId.clear()
    unknown.byKey.clear()
    unknown.byId.clear()
    app.log.info('site cache cleared: the invalidation channel was reconnected and may have missed changes')
  }
  // Subscribing waits for Redis; one that is away at start must not hold the service up (it
  // reconnects by itself, and the subscription follows): until then the TTL bounds staleness.
  let unsubscribe: Unsubscribe | undefined
  const subscribing = app.keyValue.subscribe(INVALIDATION_CHANNEL, dropSite, dropAll).then(
    (stop) => {
      unsubscribe = stop
      return true
    },
    (error: unknown) => {
      app.log.warn({ err: error }, 'site cache invalidation is not subscribed; relying on the TTL')
      return true
    },
  )
  const waited = new AbortController()
  const subscribed = await Promise.race([subscribing, delay(SUBSCRIBE_WAIT_MS, false, { signal: waited.signal }).catch(() => true)])
  waited.abort()
  if (!subscribed) {
    app.log.warn('site cache invalidation is not subscribed yet (Redis does not answer); relying on the TTL until it is')
    // Whatever was cached until then may have missed announcements too.
    void subscribing.then(() => {
      if (unsubscribe !== undefined) dropAll()
    })
  }

  type Lookup = 'byKey' | 'byId'
  /** The site (null: known to be unknown) while fresh in memory; undefined when the database must tell. */
  const peek = (lookup: Lookup, key: string): Site | null | undefined => {
    const now = Date.now()
    const cached = known[lookup].get(key)
    if (cached !== undefined && cached.expiresAt > now) return cached.site
    const unknownUntil = unknown[lookup].get(key)
    return unknownUntil !== undefined && unknownUntil > now ? null : undefined
  }
  const lookUp = async (lookup: Lookup, key: string, load: () => Promise<Site | undefined>) => {
    const cached = peek(lookup, key)
    if (cached !== undefined) return cached ?? undefined
    const generation = invalidations
    const site = await load()
    if (generation !== invalidations) return site
    if (site === undefined) {
      // Gone (deleted where this instance missed the announcement): its stale entry goes too.
      known[lookup].delete(key)
      unknown[lookup].set(key, Date.now() + UNKNOWN_TTL_MS)
    } else {
      unknown[lookup].delete(key)
      known[lookup].set(key, { site, expiresAt: Date.now() + CACHE_TTL_MS })
    }
    return site
  }

  const cache: SiteCache = {
    findBySiteKey: (siteKey) => lookUp('byKey', siteKey, () => repository.findBySiteKey(siteKey)),
    peekBySiteKey: (siteKey) => peek('byKey', siteKey),
    findById: (id) => lookUp('byId', id, () => repository.findById(id)),
    async invalidate(site) {
      dropSite(site.id)
      // The other instances hear of it through Redis. Should this instance fail to reach it while
      // they still do, the announcement is retried in the background while their copies could
      // still be fresh; the TTL bounds the rest.
      await app.keyValue.publish(INVALIDATION_CHANNEL, site.id).catch((error: unknown) => {
        // Redis away (a development start announces its demo site): the line says it, and the
        // outage has its own line (plugins/storage.ts); a client's stack would tell nothing more.
        const cause = error instanceof Error && isOutage(error) ? { reason: error.message } : { err: error }
        app.log.warn({ ...cause, siteId: site.id }, 'could not announce a site change; retrying while other instances may keep their copy')
        announceLater(site.id)
      })
    },
  }

  /** Ids whose announcement failed, retried every ANNOUNCE_RETRY_MS until CACHE_TTL_MS has passed. */
  const unannounced = new Map<string, number>()
  let retryTimer: NodeJS.Timeout | undefined
  const retryAnnouncements = async () => {
    retryTimer = undefined
    for (const [id, giveUpAt] of unannounced) {
      if (Date.now() >= giveUpAt) {
        unannounced.delete(id)
        continue
      }
      try {
        await app.keyValue.publish(INVALIDATION_CHANNEL, id)
        unannounced.delete(id)
      } catch {
        break
      }
    }
    if (unannounced.size > 0) retryTimer ??= setTimeout(() => void retryAnnouncements(), ANNOUNCE_RETRY_MS).unref()
  }
  const announceLater = (id: string) => {
    unannounced.set(id, Date.now() + CACHE_TTL_MS)
    retryTimer ??= setTimeout(() => void retryAnnouncements(), ANNOUNCE_RETRY_MS).unref()
  }

  app.decorate('sites', repository)
  app.decorate('siteCache', cache)
  app.addHook('onClose', async () => {
    clearTimeout(retryTimer)
    await unsubscribe?.()
  })
}

export default fp(sitesPlugin, { name: 'sites', dependencies: ['storage'] })
