import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createKeyRing } from '../../src/secret.js'
import { openRedisStore, type RedisStoreOptions } from '../../src/storage/redis/redis-store.js'
import { browserHeaders, createTestSite, obtainToken, type TestSite } from '../helpers/core-flow.js'
import { hasRedisServer, startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js'
import { openTestDatabase } from '../helpers/storage.js'
import { TEST_SECRET } from '../helpers/test-app.js'

/**
 * A Redis that loses its data (restarted without persistence, as many caches run) loses the
 * markers that make tokens single-use: the tokens issued before must not redeem again.
 */
const SKEW_MARGIN_MS = 2_000

interface Service {
  redis: PrivateRedis
  app: App
  site: TestSite
}

/** The service on the embedded database and a private redis-server, with one site; closed after the suite. */
function serviceOnPrivateRedis(storeOptions: Partial<RedisStoreOptions> = {}): () => Service {
  let service: Service | undefined
  beforeAll(async () => {
    const redis = await startPrivateRedis()
    const { database } = await openTestDatabase('pglite')
    const keyValue = await openRedisStore({ url: redis.url, keyPrefix: 'tollgate:', ...storeOptions })
    const app = await buildApp({ config: loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET, RATE_LIMIT_PER_MINUTE: '0' }), storage: { database, keyValue }, keyRing: createKeyRing(TEST_SECRET), logger: false })
    service = { redis, app, site: await createTestSite(app) }
  }, 30_000)
  afterAll(async () => {
    await service?.app.close()
    await service?.redis.stop()
  })
  return () => service!
}

describe.skipIf(!hasRedisServer)('Siteverify across a Redis that lost its data', () => {
  // The clock-skew margin shortened from 60 s so that the test sees it end.
  const service = serviceOnPrivateRedis({ epochCheckMs: 200, clockSkewMarginMs: SKEW_MARGIN_MS })

  const redeem = async (token: string) => {
    const { app, site } = service()
    return (await app.inject({ method: 'POST', url: '/siteverify', payload: { secret: site.secretKey, response: token } })).json<{ success: boolean; 'error-codes': string[] }>()
  }

  it('refuses tokens redeemed before the loss, stamped by a clock running ahead included, and redeems the ones issued after it once', async () => {
    const { app, site, redis } = service()
    const headers = browserHeaders(site.siteKey)
    const spent = await obtainToken(app, headers)
    const unspent = await obtainToken(app, headers)
    // An instance whose clock runs ahead of Redis's (within the margin) stamps its tokens later.
    const now = Date.now
    Date.now = () => now() + SKEW_MARGIN_MS / 2
    const spentAhead = await obtainToken(app, headers).finally(() => (Date.now = now))
    for (const token of [spent, spentAhead]) {
      expect(await redeem(token)).toMatchObject({ success: true })
      expect(await redeem(token)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    }

    await redis.restart()
    // The store reconnects on its own; Siteverify answers again once it has.
    await expect.poll(async () => (await redeem(spent))['error-codes'], { timeout: 10_000 }).not.toEqual(['internal-error'])

    for (const token of [spent, spentAhead]) expect(await redeem(token)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    // Whether it was spent cannot be known any more: refused too.
    expect(await redeem(unspent)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    // Tokens issued once the margin has passed redeem, once.
    await new Promise((resolve) => setTimeout(resolve, SKEW_MARGIN_MS))
    const fresh = await obtainToken(app, headers)
    expect(await redeem(fresh)).toMatchObject({ success: true })
    expect(await redeem(fresh)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
  }, 60_000)
})

describe.skipIf(!hasRedisServer)('a Redis that evicts keys under a memory limit', () => {
  it('is reported by findForgetfulness; one that never evicts is not', async () => {
    const evicting = await startPrivateRedis(['--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru'])
    const keeping = await startPrivateRedis(['--maxmemory', '100mb', '--maxmemory-policy', 'noeviction'])
    const stores = await Promise.all([openRedisStore({ url: evicting.url }), openRedisStore({ url: keeping.url })])
    try {
      expect(await stores[0].findForgetfulness?.()).toMatch(/^Redis evicts keys under its memory limit \(maxmemory 104857600 bytes, maxmemory-policy allkeys-lru\).*set maxmemory-policy noeviction$/)
      expect(await stores[1].findForgetfulness?.()).toBeUndefined()
    } finally {
      await Promise.all(stores.map((store) => store.close()))
      await evicting.stop()
      await keeping.stop()
    }
  }, 30_000)
})

describe.skipIf(!hasRedisServer)('Siteverify across a flush of its Redis, with the default check interval', () => {
  const service = serviceOnPrivateRedis()

  it('refuses a spent token within a second and a half of FLUSHALL, whose connection stays up', async () => {
    const { app, site, redis } = service()
    const redeem = async (token: string) =>
      (await app.inject({ method: 'POST', url: '/siteverify', payload: { secret: site.secretKey, response: token } })).json<{ success: boolean; 'error-codes': string[] }>()
    const spent = await obtainToken(app, browserHeaders(site.siteKey))
    expect(await redeem(spent)).toMatchObject({ success: true })
    const { Redis } = await import('ioredis')
    const admin = new Redis(redis.url)
    try {
      await admin.flushall()
    } finally {
      admin.disconnect()
    }
    // The epoch is read every second (it was every 5 s, and the token redeemed again meanwhile).
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(await redeem(spent)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
  }, 30_000)
})

describe.skipIf(!hasRedisServer)('Siteverify while its Redis is down', () => {
  const service = serviceOnPrivateRedis()

  const siteverify = async (payload: Record<string, string>) =>
    (await service().app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload })).json<{ success: boolean; 'error-codes': string[] }>()
  const challengeStatus = async () => (await service().app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(service().site.siteKey) })).statusCode

  it("tells a form that came without a token because the visitor's challenge got 503 (internal-error) from one that skipped it", async () => {
    const { site, redis } = service()
    expect(await siteverify({ secret: site.secretKey, response: '' })).toMatchObject({ success: false, 'error-codes': ['missing-input-response'] })
    await redis.stop()
    // What the page's SDK got: 503, so the documented fail-open page submitted without a token.
    await expect.poll(challengeStatus, { timeout: 10_000 }).toBe(503)
    // The documented fail-open backend lets the visitor through on internal-error.
    await expect.poll(async () => (await siteverify({ secret: site.secretKey, response: '' }))['error-codes'], { timeout: 5_000 })
      .toEqual(['missing-input-response', 'internal-error'])
    // A call that lacks its secret is the backend's own mistake, outage or not.
    expect(await siteverify({ response: '' })).toMatchObject({ 'error-codes': ['missing-input-secret', 'missing-input-response'] })
  }, 60_000)
})
