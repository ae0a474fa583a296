import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { issueToken, readToken } from '../../src/domain/token/token.js'
import { createKeyRing } from '../../src/secret.js'
import { openRedisStore, type RedisStoreOptions } from '../../src/storage/redis/redis-store.js'
import { browserHeaders, createTestSite, obtainToken, type TestSite } from '../helpers/core-flow.js'
import { hasRedisServer, startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js'
import { hasPostgres, hasRedis } from '../helpers/services.js'
import { buildSharedInstances, type SharedInstances } from '../helpers/shared-instances.js'
import { openTestDatabase } from '../helpers/storage.js'
import { TEST_SECRET } from '../helpers/test-app.js'

/**
 * A Redis that loses its data (restarted without persistence, as many caches run) loses the
 * markers that make tokens single-use: the tokens issued before must not redeem again.
 */
const SKEW_MARGIN_MS = 60_000

/** The Siteverify answer `app` gives `token` with the site's secret. */
async function redeemWith(app: App, site: TestSite, token: string): Promise<{ success: boolean; 'error-codes': string[] }> {
  return (await app.inject({ method: 'POST', url: '/siteverify', payload: { secret: site.secretKey, response: token } })).json()
}

/** FLUSHALL on the Redis at `url`, as an operator would send it: the service's connections stay up. */
async function flushAll(url: string): Promise<void> {
  const { Redis } = await import('ioredis')
  const admin = new Redis(url)
  try {
    await admin.flushall()
  } finally {
    admin.disconnect()
  }
}

interface Service {
  redis: PrivateRedis
  app: App
  site: TestSite
}

/** The service on the embedded database and a private redis-server, with one site; closed after the suite. */
function serviceOnPrivateRedis(storeOptions: Partial<RedisStoreOptions> = {}, redisArguments: () => string[] = () => []): () => Service {
  let service: Service | undefined
  beforeAll(async () => {
    const redis = await startPrivateRedis(redisArguments())
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
  // The default clock-skew margin (60 s): tokens that carry the new epoch redeem well within it.
  const service = serviceOnPrivateRedis({ epochCheckMs: 200 })

  const redeem = async (token: string) => {
    const { app, site } = service()
    return redeemWith(app, site, token)
  }
  /** A token issued while this instance's clock is `skewMs` off the others'. */
  const obtainTokenSkewed = async (skewMs: number) => {
    const { app, site } = service()
    const now = Date.now
    Date.now = () => now() + skewMs
    return obtainToken(app, browserHeaders(site.siteKey)).finally(() => (Date.now = now))
  }

  it('refuses the tokens issued before the loss, stamped by a clock running ahead included, and redeems at once, once, the ones issued after it', async () => {
    const { app, site, redis } = service()
    const spent = await obtainTokenSkewed(0)
    const unspent = await obtainTokenSkewed(0)
    // An instance whose clock runs ahead of Redis's (within the margin) stamps its tokens later.
    const spentAhead = await obtainTokenSkewed(SKEW_MARGIN_MS / 2)
    for (const token of [spent, spentAhead]) {
      expect(await redeem(token)).toMatchObject({ success: true })
      expect(await redeem(token)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    }
    const epochBefore = app.keyValue.dataEpoch()
    expect(epochBefore).toBeDefined()

    await redis.restart()
    // The store reconnects on its own and reads the new epoch.
    // (Undefined from the reconnection until the read answers.)
    await expect.poll(() => app.keyValue.dataEpoch() ?? epochBefore, { timeout: 10_000 }).not.toBe(epochBefore)

    for (const token of [spent, spentAhead]) expect(await redeem(token)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    // Whether it was spent cannot be known any more: refused too.
    expect(await redeem(unspent)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    // Within the minute after the loss (the new epoch's time lies 60 s ahead, for tokens without
    // an epoch), tokens issued under the new epoch redeem, once, whatever the issuing clock says.
    expect(Date.now()).toBeLessThan(app.keyValue.remembersSince())
    for (const skewMs of [0, -30_000, 30_000]) {
      const fresh = await obtainTokenSkewed(skewMs)
      expect(await redeem(fresh), `issued by a clock ${skewMs} ms off`).toMatchObject({ success: true })
      expect(await redeem(fresh)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    }
    // A token without an epoch (issued before tokens carried one) keeps the issue-time rule: one
    // stamped after the loss but within the margin is refused.
    const claims = readToken(createKeyRing(TEST_SECRET).macKeyFor('token'), spent, Date.now())
    if (claims.outcome === 'invalid') throw new Error('the token does not read')
    const withoutEpoch = issueToken(createKeyRing(TEST_SECRET).macKeyFor('token'), { ...claims.claims, challengeId: randomUUID(), issuedAt: Date.now(), dataEpoch: null })
    expect(site.siteKey).toBe(claims.claims.siteKey)
    expect(await redeem(withoutEpoch)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
  }, 60_000)
})

describe.skipIf(!hasRedisServer)('Siteverify across a Redis restored from an RDB snapshot', () => {
  let directory: string
  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), 'tollgate-rdb-'))
  })
  afterAll(() => rmSync(directory, { recursive: true, force: true }))
  const service = serviceOnPrivateRedis({ epochCheckMs: 200 }, () => ['--dbfilename', 'tollgate.rdb', '--dir', directory])

  it('refuses a token redeemed after the snapshot (its marker was not in it), and every instance reads the same new epoch', async () => {
    const { app, site, redis } = service()
    const redeem = (token: string) => redeemWith(app, site, token)
    // Another instance on the same Redis.
    const other = await openRedisStore({ url: redis.url, keyPrefix: 'tollgate:', epochCheckMs: 200 })
    const { Redis } = await import('ioredis')
    const admin = new Redis(redis.url)
    try {
      const spentBefore = await obtainToken(app, browserHeaders(site.siteKey))
      expect(await redeem(spentBefore)).toMatchObject({ success: true })
      await admin.save()
      const spentAfter = await obtainToken(app, browserHeaders(site.siteKey))
      expect(await redeem(spentAfter)).toMatchObject({ success: true })
      const epochBefore = app.keyValue.dataEpoch()
      expect(other.dataEpoch()).toBe(epochBefore)

      // Killed (SIGKILL) and started again from the snapshot, which holds the epoch.
      await redis.restart()
      await expect.poll(() => app.keyValue.dataEpoch() ?? epochBefore, { timeout: 10_000 }).not.toBe(epochBefore)
      await expect.poll(() => other.dataEpoch(), { timeout: 10_000 }).toBe(app.keyValue.dataEpoch())

      for (const token of [spentAfter, spentBefore]) expect(await redeem(token)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
      const fresh = await obtainToken(app, browserHeaders(site.siteKey))
      expect(await redeem(fresh)).toMatchObject({ success: true })
      expect(await redeem(fresh)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
      // The epoch holds from then on: read again and again, it does not move.
      const epochAfter = app.keyValue.dataEpoch()
      await new Promise((resolve) => setTimeout(resolve, 600))
      expect([app.keyValue.dataEpoch(), other.dataEpoch()]).toEqual([epochAfter, epochAfter])
    } finally {
      admin.disconnect()
      await other.close()
    }
  }, 60_000)
})

describe.skipIf(!hasRedisServer || !hasPostgres || !hasRedis)('Siteverify across instances, one of which has not read the epoch since a flush', () => {
  let redis: PrivateRedis
  let shared: SharedInstances
  let site: TestSite
  beforeAll(async () => {
    redis = await startPrivateRedis()
    // The first instance reads the epoch every 200 ms, the second (for the test) once an hour.
    shared = await buildSharedInstances(2, {}, {}, (index) => ({ url: redis.url, epochCheckMs: index === 0 ? 200 : 3_600_000 }))
    site = await createTestSite(shared.instances[0]!)
  }, 30_000)
  afterAll(async () => {
    await shared?.close()
    await redis?.stop()
  })

  it('refuses the tokens it issues under the epoch before, and those issued under the new one, until it reads the epoch', async () => {
    const [current, stale] = shared.instances as [App, App]
    const redeemAt = (app: App, token: string) => redeemWith(app, site, token)
    const headers = browserHeaders(site.siteKey)
    const epochBefore = current.keyValue.dataEpoch()
    expect(stale.keyValue.dataEpoch()).toBe(epochBefore)
    await flushAll(redis.url)
    await expect.poll(() => current.keyValue.dataEpoch() ?? epochBefore, { timeout: 5_000 }).not.toBe(epochBefore)
    expect(stale.keyValue.dataEpoch()).toBe(epochBefore)

    // The visitor was allowed by the stale instance, but its token names the data before the flush.
    const fromStale = await obtainToken(stale, headers)
    expect(await redeemAt(current, fromStale)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    // The stale instance cannot vouch for the new epoch's tokens either.
    const fromCurrent = await obtainToken(current, headers)
    expect(await redeemAt(stale, fromCurrent)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    expect(await redeemAt(current, fromCurrent)).toMatchObject({ success: true })
  }, 30_000)
})

describe.skipIf(!hasRedisServer)('Siteverify after an upgrade from a release that never wrote the data epoch', () => {
  /**
   * The service started on a Redis seeded with `keys` (what an earlier release left, without
   * tollgate:data-epoch), and a way to redeem the tokens that release issued (they carry no epoch).
   */
  async function upgradeOnto(keys: Record<string, string>) {
    const redis = await startPrivateRedis()
    const { Redis } = await import('ioredis')
    const admin = new Redis(redis.url)
    try {
      for (const [key, value] of Object.entries(keys)) await admin.set(key, value, 'PX', 360_000)
    } finally {
      admin.disconnect()
    }
    const { database } = await openTestDatabase('pglite')
    const keyValue = await openRedisStore({ url: redis.url, keyPrefix: 'tollgate:' })
    const app = await buildApp({ config: loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET, RATE_LIMIT_PER_MINUTE: '0' }), storage: { database, keyValue }, keyRing: createKeyRing(TEST_SECRET), logger: false })
    const site = await createTestSite(app)
    const tokenKey = createKeyRing(TEST_SECRET).macKeyFor('token')
    const read = readToken(tokenKey, await obtainToken(app, browserHeaders(site.siteKey)), Date.now())
    if (read.outcome === 'invalid') throw new Error('the token does not read')
    return {
      app,
      /** A token as the earlier release issued it `ageMs` ago: no data epoch. */
      oldToken: (ageMs: number, challengeId: string = randomUUID()) =>
        issueToken(tokenKey, { ...read.claims, challengeId, issuedAt: Date.now() - ageMs, dataEpoch: null }),
      newToken: () => obtainToken(app, browserHeaders(site.siteKey)),
      redeem: (token: string) => redeemWith(app, site, token),
      close: async () => {
        await app.close()
        await redis.stop()
      },
    }
  }

  it("redeems, once, the tokens it issued and no one redeemed, when Redis holds the earlier release's keys; a redeemed one stays spent", async () => {
    const spentId = randomUUID()
    const service = await upgradeOnto({
      [`tollgate:redeemed:${spentId}`]: 'k:',
      'tollgate:history:{site:client}:rate:1': '3',
    })
    try {
      // Written as of before any live token: the longest a token lives (300 s) and the margin ago.
      expect(service.app.keyValue.remembersSince()).toBeLessThanOrEqual(Date.now() - 300_000 - SKEW_MARGIN_MS)
      for (const ageMs of [1_000, 120_000, 290_000]) {
        const inFlight = service.oldToken(ageMs)
        expect(await service.redeem(inFlight), `issued ${ageMs} ms before the upgrade`).toMatchObject({ success: true })
        expect(await service.redeem(inFlight)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
      }
      expect(await service.redeem(service.oldToken(60_000, spentId))).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
      // The new release's own tokens (which carry the epoch) redeem as ever.
      expect(await service.redeem(await service.newToken())).toMatchObject({ success: true })
    } finally {
      await service.close()
    }
  }, 90_000)

  it('keeps the epoch a release before the run_id was kept wrote (the tokens that carry it stay good), at once and when read again', async () => {
    const epoch = Date.now() - 100_000
    const service = await upgradeOnto({ 'tollgate:data-epoch': String(epoch) })
    try {
      expect(service.app.keyValue.dataEpoch()).toBe(epoch)
      // Read again (every second) under the run_id now written beside it, it stays.
      await new Promise((resolve) => setTimeout(resolve, 1_200))
      expect(service.app.keyValue.dataEpoch()).toBe(epoch)
    } finally {
      await service.close()
    }
  }, 90_000)

  it('refuses the tokens from before when Redis holds none of its keys (it lost them, or is new)', async () => {
    const service = await upgradeOnto({ 'another-application:key': '1' })
    try {
      expect(await service.redeem(service.oldToken(60_000))).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    } finally {
      await service.close()
    }
  }, 90_000)
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
    const redeem = (token: string) => redeemWith(app, site, token)
    const spent = await obtainToken(app, browserHeaders(site.siteKey))
    expect(await redeem(spent)).toMatchObject({ success: true })
    await flushAll(redis.url)
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
