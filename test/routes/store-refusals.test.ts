import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createKeyRing } from '../../src/secret.js'
import { migrate } from '../../src/storage/migrate.js'
import type { SqlDatabase } from '../../src/storage/ports.js'
import { openPostgresDatabase } from '../../src/storage/postgres/postgres-database.js'
import { openRedisStore } from '../../src/storage/redis/redis-store.js'
import { browserHeaders, createTestSite, requestChallenge, type TestSite } from '../helpers/core-flow.js'
import { hasRedisServer, startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js'
import { createScratchDatabase, runOn, type ScratchDatabase } from '../helpers/scratch-database.js'
import { hasPostgres, postgresUrl } from '../helpers/services.js'
import { openTestDatabase } from '../helpers/storage.js'
import { TEST_SECRET } from '../helpers/test-app.js'

/**
 * A store can answer and still refuse: Redis full under noeviction, a replica after a failover,
 * a password changed; PostgreSQL read-only. For the operator that is an outage like a lost
 * connection: the requests that need the store answer 503 service_unavailable (logged once per
 * interval, not once per request), and /ready says which store refuses and why.
 */

interface Service {
  app: App
  site: TestSite
  /** The app's log lines, parsed. */
  lines: { level: number; msg: string; [key: string]: unknown }[]
}

async function startService(database: SqlDatabase, redisUrl: string): Promise<Service> {
  const lines: Service['lines'] = []
  const keyValue = await openRedisStore({ url: redisUrl, keyPrefix: 'tollgate:' })
  const app = await buildApp({
    config: loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET, RATE_LIMIT_PER_MINUTE: '0' }),
    storage: { database, keyValue },
    keyRing: createKeyRing(TEST_SECRET),
    logger: { level: 'info', stream: { write: (line: string) => void lines.push(JSON.parse(line) as Service['lines'][number]) } },
  })
  return { app, site: await createTestSite(app), lines }
}

async function readiness(app: App) {
  const response = await app.inject({ method: 'GET', url: '/ready' })
  return { statusCode: response.statusCode, ...response.json<{ checks: Record<'database' | 'redis', { status: string; error?: string }> }>().checks }
}

/** Polls /ready until `isWanted` holds of its answer (a store's state changes take a moment to be seen). */
async function readinessWhen(app: App, isWanted: (answer: Awaited<ReturnType<typeof readiness>>) => boolean) {
  const deadline = Date.now() + 5_000
  for (;;) {
    const answer = await readiness(app)
    if (isWanted(answer) || Date.now() > deadline) return answer
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe.skipIf(!hasRedisServer)('a Redis that answers but refuses', () => {
  let redis: PrivateRedis
  let primary: PrivateRedis
  let admin: Redis
  let service: Service
  beforeAll(async () => {
    ;[redis, primary] = await Promise.all([startPrivateRedis(), startPrivateRedis()])
    admin = new Redis(redis.url)
    service = await startService((await openTestDatabase('pglite')).database, redis.url)
  }, 30_000)
  afterEach(async () => {
    await admin.call('CONFIG', 'SET', 'maxmemory', '0')
    await admin.call('REPLICAOF', 'NO', 'ONE')
  })
  afterAll(async () => {
    await service.app.close()
    admin.disconnect()
    await Promise.all([redis.stop(), primary.stop()])
  })

  it('full under noeviction: challenges answer 503 service_unavailable, logged once, and /ready names the cause', async () => {
    const headers = browserHeaders(service.site.siteKey)
    expect((await requestChallenge(service.app, headers)).statusCode).toBe(200)
    await admin.call('CONFIG', 'SET', 'maxmemory', '1')
    const linesBefore = service.lines.length

    const answers = await Promise.all(Array.from({ length: 20 }, () => requestChallenge(service.app, headers)))
    expect(answers.map((answer) => [answer.statusCode, answer.json<{ error: { code: string } }>().error.code])).toEqual(Array(20).fill([503, 'service_unavailable']))
    const errors = service.lines.slice(linesBefore).filter((line) => line.level >= 50)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ dependency: 'Redis' })
    expect(await readiness(service.app)).toMatchObject({ statusCode: 503, redis: { status: 'down', error: 'refuses writes: it is at its maxmemory (OOM)' } })

    await admin.call('CONFIG', 'SET', 'maxmemory', '0')
    expect(await readiness(service.app)).toMatchObject({ statusCode: 200, redis: { status: 'up' } })
    expect((await requestChallenge(service.app, headers)).statusCode).toBe(200)
  })

  it('a read-only replica (a failover that left this service on the old primary): 503, and /ready says so', async () => {
    await admin.call('REPLICAOF', '127.0.0.1', new URL(primary.url).port)
    const answer = await requestChallenge(service.app, browserHeaders(service.site.siteKey))
    expect([answer.statusCode, answer.json().error.code]).toEqual([503, 'service_unavailable'])
    expect(await readinessWhen(service.app, (ready) => ready.redis.error?.includes('READONLY') === true)).toMatchObject({
      statusCode: 503,
      redis: { status: 'down', error: 'refuses writes: a read-only replica (READONLY); REDIS_URL must name the primary' },
    })
  })

  it('a password set while the service runs: /ready says authentication failed, and no log line holds a password', async () => {
    await admin.call('CONFIG', 'SET', 'requirepass', 'NEW-PASSWORD-42')
    try {
      await admin.call('AUTH', 'NEW-PASSWORD-42')
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes')
      await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
      expect(await readinessWhen(service.app, (ready) => ready.redis.error?.startsWith('authentication failed') === true)).toMatchObject({
        statusCode: 503,
        redis: { status: 'down', error: expect.stringMatching(/^authentication failed \(NOAUTH\)/) as string },
      })
      // The log says why, once, besides the loss.
      expect(service.lines.filter((line) => line.msg.startsWith('Redis refuses the connection')).map((line) => line.reason)).toEqual([
        'authentication failed (NOAUTH): REDIS_URL names no password, or not the one this server wants',
      ])
    } finally {
      await admin.call('CONFIG', 'SET', 'requirepass', '')
    }
    expect(JSON.stringify(service.lines)).not.toContain('NEW-PASSWORD-42')
  })
})

describe.skipIf(!hasRedisServer)('a Redis that refuses the password of REDIS_URL', () => {
  it('starts, says why Redis is refused, and logs no line with the password in it', async () => {
    const redis = await startPrivateRedis(['--requirepass', 'RIGHT-PASSWORD-7'])
    let service: Service | undefined
    try {
      service = await startService((await openTestDatabase('pglite')).database, redis.url.replace('redis://', 'redis://:WRONG-PASSWORD-9@'))
      expect(await readiness(service.app)).toMatchObject({ statusCode: 503, redis: { error: expect.stringMatching(/^authentication failed \(WRONGPASS\)/) as string } })
      // The site cache's subscriber logs its failure after a moment: wait for that line.
      await new Promise((resolve) => setTimeout(resolve, 500))
      const logged = service.lines.map((line) => JSON.stringify(line)).join('\n')
      expect(logged).toContain('WRONGPASS')
      expect(logged).not.toContain('WRONG-PASSWORD-9')
    } finally {
      await service?.app.close()
      await redis.stop()
    }
  })
})

describe.skipIf(!hasRedisServer || !hasPostgres)('a PostgreSQL that answers but refuses writes', () => {
  let scratch: ScratchDatabase
  let redis: PrivateRedis
  let service: Service
  const setReadOnly = async (isReadOnly: boolean) => {
    await runOn(postgresUrl, `ALTER DATABASE ${scratch.name} ${isReadOnly ? 'SET default_transaction_read_only = on' : 'RESET default_transaction_read_only'}`)
    // The setting applies to new sessions: the service's connections are ended, as at a failover.
    await runOn(postgresUrl, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${scratch.name}' AND pid <> pg_backend_pid()`)
  }
  beforeAll(async () => {
    ;[scratch, redis] = await Promise.all([createScratchDatabase('readonly'), startPrivateRedis()])
    const database = await openPostgresDatabase({ connectionString: scratch.url })
    await migrate(database)
    service = await startService(database, redis.url)
  }, 30_000)
  afterAll(async () => {
    await service.app.close()
    await Promise.all([scratch.drop(), redis.stop()])
  })

  it('read-only (a standby, a demoted primary): writes answer 503 service_unavailable, and /ready says so', async () => {
    await setReadOnly(true)
    expect(await readinessWhen(service.app, (ready) => ready.database.error?.startsWith('refuses writes') === true)).toMatchObject({
      statusCode: 503,
      database: { status: 'down', error: 'refuses writes: read-only (a standby, or default_transaction_read_only on)' },
      redis: { status: 'up' },
    })
    const signUp = await service.app.inject({ method: 'POST', url: '/api/v1/accounts', payload: { email: 'ro@example.com', password: 'long enough password' } })
    expect([signUp.statusCode, signUp.json().error.code]).toEqual([503, 'service_unavailable'])

    await setReadOnly(false)
    expect(await readinessWhen(service.app, (ready) => ready.statusCode === 200)).toMatchObject({ statusCode: 200, database: { status: 'up' } })
  })
})
