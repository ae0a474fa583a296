import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createKeyRing } from '../../src/secret.js'
import { migrate } from '../../src/storage/migrate.js'
import { openMemoryStore } from '../../src/storage/memory/memory-store.js'
import { openPostgresDatabase } from '../../src/storage/postgres/postgres-database.js'
import { openRedisStore } from '../../src/storage/redis/redis-store.js'
import { browserHeaders, createTestSite, type TestSite } from '../helpers/core-flow.js'
import { freePort } from '../helpers/free-port.js'
import { hasPostgres, hasRedis, postgresUrl, redisUrl } from '../helpers/services.js'
import { dropSchema, openTestDatabase, uniqueName } from '../helpers/storage.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'
import { TEST_SECRET } from '../helpers/test-app.js'

interface LogLine {
  level: number
  msg: string
  dependency?: string
  reason?: string
  failedSinceLastLine?: number
  bufferedRows?: number
  written?: number
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
    // In plain words beside ioredis's own ("Stream isn't writeable...", kept as err).
    expect(failures).toEqual([
      expect.objectContaining({ dependency: 'Redis', reason: 'Redis not reachable', failedSinceLastLine: 0, err: expect.anything(), msg: expect.stringMatching(/^request failed: Redis unavailable/) as string }),
    ])

    await relay.restore()
    await expect.poll(() => lines.some((line) => line.msg === 'Redis connection back'), { timeout: 10_000 }).toBe(true)
    expect((await app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey) })).statusCode).toBe(200)
  }, 30_000)
})

/**
 * What an operator reads while PostgreSQL is away: the requests' failures naming it, the
 * verification log's and the counters' failed writes told once (not a stack a second), and each
 * written again once it is back.
 */
describe.skipIf(!hasPostgres)('the log during a PostgreSQL outage', () => {
  it('names PostgreSQL, tells each buffer\'s failure once, and says when each is written again', async () => {
    const schema = uniqueName('outage')
    const target = new URL(postgresUrl)
    const relay = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    target.host = `127.0.0.1:${relay.port}`
    const database = await openPostgresDatabase({ connectionString: target.href, schema })
    await migrate(database)
    const lines: LogLine[] = []
    const app = await buildApp({
      config: loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET, RATE_LIMIT_PER_MINUTE: '0' }),
      storage: { database, keyValue: openMemoryStore() },
      keyRing: createKeyRing(TEST_SECRET),
      logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line) as LogLine) } },
      metricsFlushIntervalMs: 200,
    })
    try {
      const { site } = await app.sites.create({ accountId: null, name: 'outage' })
      await relay.cut()
      const before = lines.length
      // Rows for the log, and counts for the counters, waiting for a database that is away.
      for (let index = 0; index < 3; index += 1) {
        app.verificationLog.record({
          siteId: site.id, challengeId: crypto.randomUUID(), createdAt: new Date(), action: 'allow', errorCode: null, riskScore: 1, anomalies: [],
          countryCode: null, clientIp: null, hostname: null, pageAction: null, userAgent: null, difficulty: 10, solveTimeMs: 100, stepUps: 0, device: null, decidedBy: null,
        })
      }
      app.counters.increment('challengesIssued', {})
      const logIn = await app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: 'someone@example.com', password: 'a password of length' } })
      expect(logIn.statusCode).toBe(503)
      // The log is tried every second, the counters every 200 ms: three seconds is many attempts.
      await new Promise((resolve) => setTimeout(resolve, 3_000))
      const during = lines.slice(before)
      expect(during.filter((line) => line.level >= 50)).toEqual([
        expect.objectContaining({ dependency: 'PostgreSQL', reason: 'PostgreSQL not reachable', msg: expect.stringMatching(/^request failed: PostgreSQL unavailable/) as string }),
      ])
      expect(during.filter((line) => line.msg.startsWith('could not write the verification log'))).toEqual([
        expect.objectContaining({ level: 40, bufferedRows: 3, err: expect.anything(), msg: 'could not write the verification log; will retry (told again once per 30 s while it fails)' }),
      ])
      expect(during.filter((line) => line.msg.startsWith('could not store metric counters'))).toEqual([
        expect.objectContaining({ level: 40, err: expect.anything(), msg: 'could not store metric counters; will retry (told again once per 30 s while it fails)' }),
      ])
      // The rows wait, as /metrics shows for the alert (TollgateVerificationLogBacklog).
      expect((await app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^tollgate_verification_log_buffered_rows 3$/m)

      await relay.restore()
      await expect.poll(() => lines.some((line) => line.msg === 'verification log written again (3 rows)'), { timeout: 10_000 }).toBe(true)
      await expect.poll(() => lines.some((line) => line.msg === 'metric counters written again'), { timeout: 10_000 }).toBe(true)
      expect(lines.find((line) => line.msg === 'verification log written again (3 rows)')).toMatchObject({ level: 30, written: 3 })
      expect((await app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^tollgate_verification_log_buffered_rows 0$/m)
    } finally {
      await relay.restore().catch(() => {})
      await app.close()
      await relay.close()
      await dropSchema(schema)
    }
  }, 40_000)
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
