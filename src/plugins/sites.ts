import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Site } from '../domain/sites/site.js'
import { createSiteRepository, type SiteRepository } from '../storage/sql/site-repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    sites: SiteRepository
    siteCache: SiteCache
  }
}

const INVALIDATION_CHANNEL = 'sites:invalidated'
const CACHE_TTL_MS = 30_000

export interface SiteCache {
  /** The site with this public key, from memory when fresh: the public routes' hot path. */
  findBySiteKey(siteKey: string): Promise<Site | undefined>
  findById(id: string): Promise<Site | undefined>
  /** Drops the site from every instance's cache; call after any change to it. */
  invalidate(site: Pick<Site, 'id'>): Promise<void>
}

/**
 * Sites are read on every public request, so each instance keeps them in memory for a short
 * while. A change is announced on a Redis channel and every instance drops its copy at once;
 * the TTL bounds staleness should an announcement be missed (e.g. during a Redis outage).
 */
async function sitesPlugin(app: FastifyInstance): Promise<void> {
  const repository = createSiteRepository(app.database)
  const byKey = new Map<string, { site: Site | undefined; expiresAt: number }>()

  const dropSite = (id: string) => {
    byKey.delete(`id:${id}`)
    for (const [key, entry] of byKey) if (entry.site?.id === id) byKey.delete(key)
  }
  const unsubscribe = await app.keyValue.subscribe(INVALIDATION_CHANNEL, dropSite).catch((error: unknown) => {
    app.log.warn({ err: error }, 'site cache invalidation is not subscribed; relying on the TTL')
    return undefined
  })

  // One map for both lookups: public keys as they are, ids prefixed. Invalidation drops a site
  // under every key it is cached by.
  const lookUp = async (cacheKey: string, load: () => Promise<Site | undefined>) => {
    const cached = byKey.get(cacheKey)
    if (cached !== undefined && cached.expiresAt > Date.now()) return cached.site
    const site = await load()
    // Unknown keys are cached too (briefly) so that a flood of bogus keys cannot reach the database.
    if (byKey.size > 10_000) byKey.clear()
    byKey.set(cacheKey, { site, expiresAt: Date.now() + (site === undefined ? 5_000 : CACHE_TTL_MS) })
    return site
  }

  const cache: SiteCache = {
    findBySiteKey: (siteKey) => lookUp(siteKey, () => repository.findBySiteKey(siteKey)),
    findById: (id) => lookUp(`id:${id}`, () => repository.findById(id)),
    async invalidate(site) {
      dropSite(site.id)
      await app.keyValue.publish(INVALIDATION_CHANNEL, site.id)
    },
  }

  app.decorate('sites', repository)
  app.decorate('siteCache', cache)
  app.addHook('onClose', async () => {
    await unsubscribe?.()
  })
}

export default fp(sitesPlugin, { name: 'sites', dependencies: ['storage'] })
