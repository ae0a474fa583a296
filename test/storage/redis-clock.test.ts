import { Redis } from 'ioredis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { CLOCK_SKEW_MARGIN_MS } from '../../src/domain/siteverify/redeem-token.js'
import type { KeyValueStore } from '../../src/storage/ports.js'
import { openRedisStore } from '../../src/storage/redis/redis-store.js'
import { hasRedis, redisUrl } from '../helpers/services.js'
import { uniqueName } from '../helpers/storage.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'

/**
 * How far the store's reading of Redis's clock may be off: half the round trip of the reading
 * (its error) and whole milliseconds, with room for a busy host. Far below the skews below, so
 * that a store that read this process's clock instead of Redis's fails.
 */
const TOLERANCE_MS = 500

/** This process's clock 10 minutes ahead of Redis's, and 10 minutes behind. */
const SKEWS = [['ahead', 10 * 60_000], ['behind', -10 * 60_000]] as const

/** Redis's clock now (TIME), in milliseconds. */
async function redisTime(admin: Redis): Promise<number> {
  const [seconds, microseconds] = await admin.time()
  return Number(seconds) * 1_000 + Math.floor(Number(microseconds) / 1_000)
}

/**
 * The Redis store reads Redis's clock (KeyValueStore.now): tokens are stamped and judged by it, and
 * a reconnection vouches for nothing stamped before it, by the same clock. These run with this
 * process's clock (Date.now, which the store measures the offset with) off Redis's.
 */
describe.skipIf(!hasRedis)('the Redis store\'s clock', () => {
  const realNow = Date.now.bind(Date)
  const keyPrefix = `${uniqueName('clock')}:`
  let admin: Redis | undefined
  let relay: TcpProxy | undefined
  let store: KeyValueStore | undefined

  /** The store, opened through a relay (to cut its connection) while this process's clock is `skewMs` off. */
  async function openSkewed(skewMs: number): Promise<{ store: KeyValueStore; relay: TcpProxy; admin: Redis }> {
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + skewMs)
    admin = new Redis(redisUrl)
    const redis = new URL(redisUrl)
    relay = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) })
    redis.host = `127.0.0.1:${relay.port}`
    store = await openRedisStore({ url: redis.href, keyPrefix })
    return { store, relay, admin }
  }

  afterEach(async () => {
    vi.restoreAllMocks()
    await store?.close()
    await relay?.close()
    await admin?.del(`${keyPrefix}data-epoch`, `${keyPrefix}data-epoch-run-id`, `${keyPrefix}ready-probe`)
    admin?.disconnect()
    store = relay = admin = undefined
  })

  it.each(SKEWS)('reads Redis\'s time as now(), not this process\'s, when this process\'s clock runs %s', async (_how, skewMs) => {
    const { store, admin } = await openSkewed(skewMs)
    // The skew is in place (a check of the test's own set-up): without it, a store that read this
    // process's clock would pass the checks below.
    expect(Math.abs(Date.now() - (await redisTime(admin)) - skewMs)).toBeLessThan(TOLERANCE_MS)
    const before = await redisTime(admin)
    const now = store.now()
    const after = await redisTime(admin)
    expect(now).toBeGreaterThanOrEqual(before - TOLERANCE_MS)
    expect(now).toBeLessThanOrEqual(after + TOLERANCE_MS)
  })

  it.each(SKEWS)('vouches after a reconnection for nothing before Redis\'s time plus the margin until it reads the epoch again, and keeps Redis\'s time across it, when this process\'s clock runs %s', async (_how, skewMs) => {
    const { store, relay, admin } = await openSkewed(skewMs)
    const epoch = store.dataEpoch()
    expect(epoch).toEqual(expect.any(Number))
    expect(store.remembersSince()).toBe(epoch)

    // Read the moment the store is back, before the epoch's reading (sent then) can answer.
    let atReconnection: { remembersSince: number; dataEpoch: number | undefined; now: number } | undefined
    store.watchConnection!((state) => {
      if (state === 'back') atReconnection = { remembersSince: store.remembersSince(), dataEpoch: store.dataEpoch(), now: store.now() }
    })
    await relay.cut()
    const before = await redisTime(admin)
    await relay.restore()
    await expect.poll(() => atReconnection, { timeout: 10_000 }).toBeDefined()
    const after = await redisTime(admin)

    // Redis may have come back empty: nothing stamped before now, by Redis's clock, plus the margin.
    expect(atReconnection!.dataEpoch).toBeUndefined()
    expect(atReconnection!.remembersSince).toBeGreaterThanOrEqual(before + CLOCK_SKEW_MARGIN_MS - TOLERANCE_MS)
    expect(atReconnection!.remembersSince).toBeLessThanOrEqual(after + CLOCK_SKEW_MARGIN_MS + TOLERANCE_MS)
    // The offset measured before the connection was lost, not reset to this process's clock.
    expect(atReconnection!.now).toBeGreaterThanOrEqual(before - TOLERANCE_MS)
    expect(atReconnection!.now).toBeLessThanOrEqual(after + TOLERANCE_MS)

    // Redis kept its data: once read again, the epoch is the one before, and vouches from then.
    await expect.poll(() => store.dataEpoch(), { timeout: 10_000 }).toBe(epoch)
    expect(store.remembersSince()).toBe(epoch)
    const now = store.now()
    expect(now).toBeGreaterThanOrEqual(after - TOLERANCE_MS)
    expect(now).toBeLessThanOrEqual((await redisTime(admin)) + TOLERANCE_MS)
  })
})
