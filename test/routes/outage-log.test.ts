import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createKeyRing } from '../../src/secret.js'
import { openRedisStore } from '../../src/storage/redis/redis-store.js'
import { browserHeaders, createTestSite, type TestSite } from '../helpers/core-flow.js'
import { freePort } from '../helpers/free-port.js'
import { hasRedis, redisUrl } from '../helpers/services.js'
import { openTestDatabase, uniqueName } from '../helpers/storage.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'
import { TEST_SECRET } from '../helpers/test-app.js'

interface LogLine {
  level: number
  msg: string
  dependency?: string
  failedSinceLastLine?: number
  err?: unknown
}

/** What an operator reads in the log while Redis is away: the outage, once, not a stack per request. */
describe.skipIf(!hasRedis)('the log during a Redis outage', () => {
  let app: App
  let relay: TcpProxy
  let site: TestSite
  const lines: LogLine[] = []

  beforeAll(async () => {
    const redis = new URL(redisUrl)
    relay = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) })
    redis.host = `127.0.0.1:${relay.port}`
    const keyValue = await openRedisStore({ url: redis.href, keyPrefix: `${uniqueName('outage')}:` })
    const { database } = await openTestDatabase('pglite')
    app = await buildApp({
      config: loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET, RATE_LIMIT_PER_MINUTE: '0' }),
      storage: { database, keyValue },
      keyRing: createKeyRing(TEST_SECRET),
      logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line) as LogLine) } },
    })
    site = await createTestSite(app)
  })
  afterAll(async () => {
    await relay.restore().catch(() => {})
    await app.close()
    await relay.close()
  })

  it('says when the connection is lost and when it is back, and logs the failing requests once per interval, naming Redis', async () => {
    await relay.cut()
    await expect.poll(() => lines.some((line) => line.msg.startsWith('Redis connection lost')), { timeout: 10_000 }).toBe(true)
    const before = lines.length
    const answers = []
    for (let index = 0; index < 20; index += 1) {
      answers.push((await app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey) })).statusCode)
    }
    expect(answers).toEqual(Array(20).fill(503))
    const failures = lines.slice(before).filter((line) => line.level >= 50)
    expect(failures).toEqual([expect.objectContaining({ dependency: 'Redis', failedSinceLastLine: 0, msg: expect.stringMatching(/^request failed: Redis unavailable/) as string })])

    await relay.restore()
    await expect.poll(() => lines.some((line) => line.msg === 'Redis connection back'), { timeout: 10_000 }).toBe(true)
    expect((await app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey) })).statusCode).toBe(200)
  }, 30_000)
})

describe('the log of a start while Redis is away', () => {
  it('says so in one plain line naming where Redis was looked for (no password), and logs no stack', async () => {
    // Nothing listens there: every connection is refused, as for a Redis not started yet.
    const url = `redis://:not-this-password@127.0.0.1:${await freePort()}/9`
    const keyValue = await openRedisStore({ url, keyPrefix: `${uniqueName('away')}:`, connectTimeoutMs: 200 })
    const { database } = await openTestDatabase('pglite')
    const lines: LogLine[] = []
    const text: string[] = []
    // Development: the demo site is seeded and its change announced on Redis, which fails.
    const app = await buildApp({
      config: loadConfig({ NODE_ENV: 'development', TOLLGATE_SECRET: TEST_SECRET }),
      storage: { database, keyValue },
      keyRing: createKeyRing(TEST_SECRET),
      logger: {
        level: 'info',
        stream: {
          write: (line: string) => {
            text.push(line)
            lines.push(JSON.parse(line) as LogLine)
          },
        },
      },
    })
    try {
      await app.ready()
      const plain = `Redis at ${url.replace(':not-this-password@', '')} is not reachable; retrying: requests that need it, and /ready, answer 503 until it is`
      expect(lines.filter((line) => line.msg.includes('not reachable'))).toEqual([expect.objectContaining({ level: 40, msg: plain })])
      expect(lines.find((line) => line.msg.startsWith('could not announce a site change'))).toMatchObject({ level: 40, reason: expect.any(String) as string })
      expect(lines.filter((line) => line.err !== undefined)).toEqual([])
      expect(text.join('')).not.toContain('not-this-password')
    } finally {
      await app.close()
    }
  }, 20_000)
})
