import { mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { errorCodeOf } from '../../src/plugins/error-handler.js'
import { createKeyRing } from '../../src/secret.js'
import { openMemoryStore } from '../../src/storage/memory/memory-store.js'
import { migrate } from '../../src/storage/migrate.js'
import { openPostgresDatabase } from '../../src/storage/postgres/postgres-database.js'
import { openRedisStore } from '../../src/storage/redis/redis-store.js'
import { hasPostgres, hasRedis, postgresUrl, redisUrl } from '../helpers/services.js'
import { dropSchema, uniqueName } from '../helpers/storage.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'
import { TEST_SECRET } from '../helpers/test-app.js'
import { browserHeaders } from '../helpers/core-flow.js'
import { asBrowser, createTestAccount } from '../helpers/dashboard-client.js'

interface Readiness {
  status: string
  checks: { database: { status: string }; redis: { status: string } }
}

/**
 * The check: with PostgreSQL and Redis configured /ready is 200; taking one away turns
 * it to 503 within seconds while /health stays 200; bringing it back turns /ready to 200 with
 * no restart. Each dependency is reached through a relay that the test can cut.
 */
describe.skipIf(!hasPostgres || !hasRedis)('readiness on PostgreSQL and Redis', () => {
  let app: App
  let databaseProxy: TcpProxy
  let redisProxy: TcpProxy
  const schema = uniqueName('test')

  const ready = async () => {
    const response = await app.inject({ method: 'GET', url: '/ready' })
    return { statusCode: response.statusCode, body: response.json<Readiness>() }
  }

  beforeAll(async () => {
    const database = new URL(postgresUrl)
    const redis = new URL(redisUrl)
    databaseProxy = await startTcpProxy({ host: database.hostname, port: Number(database.port || 5432) })
    redisProxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) })
    database.host = `127.0.0.1:${databaseProxy.port}`
    redis.host = `127.0.0.1:${redisProxy.port}`
    const sqlDatabase = await openPostgresDatabase({ connectionString: database.href, schema })
    await migrate(sqlDatabase)
    const keyValue = await openRedisStore({ url: redis.href, keyPrefix: `${schema}:` })
    const config = loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET })
    app = await buildApp({ config, storage: { database: sqlDatabase, keyValue }, keyRing: createKeyRing(TEST_SECRET), logger: false })
    await app.ready()
  })

  afterAll(async () => {
    await Promise.all([databaseProxy.restore().catch(() => {}), redisProxy.restore().catch(() => {})])
    await app.close()
    await Promise.all([databaseProxy.close(), redisProxy.close()])
    await dropSchema(schema)
  })

  it('is 200 with both up', async () => {
    expect(await ready()).toMatchObject({
      statusCode: 200,
      body: { status: 'ok', checks: { database: { status: 'up', kind: 'postgres' }, redis: { status: 'up', kind: 'redis' } } },
    })
  })

  /** tollgate_dependency_up by dependency, as a scrape reads it. */
  const dependenciesUp = async (): Promise<Record<string, number>> => {
    const exposition = (await app.inject({ method: 'GET', url: '/metrics' })).body
    return Object.fromEntries<number>([...exposition.matchAll(/^tollgate_dependency_up\{dependency="(\w+)"\} (\d)$/gm)].map(([, name = '', value]) => [name, Number(value)] as const))
  }

  it('turns 503 when Redis goes away, keeps /health 200, and recovers by itself', async () => {
    expect(await dependenciesUp()).toEqual({ postgresql: 1, redis: 1 })
    await redisProxy.cut()
    await expect.poll(ready, { timeout: 5_000, interval: 200 }).toMatchObject({
      statusCode: 503,
      body: { status: 'unavailable', checks: { database: { status: 'up' }, redis: { status: 'down' } } },
    })
    // /metrics says it too, for the alert (TollgateDependencyDown).
    expect(await dependenciesUp()).toEqual({ postgresql: 1, redis: 0 })
    expect((await app.inject({ method: 'GET', url: '/health' })).json()).toEqual({ status: 'ok' })
    await redisProxy.restore()
    await expect.poll(ready, { timeout: 10_000, interval: 250 }).toMatchObject({ statusCode: 200 })
    expect(await dependenciesUp()).toEqual({ postgresql: 1, redis: 1 })
  })

  it('turns 503 when PostgreSQL goes away and recovers by itself', async () => {
    await databaseProxy.cut()
    await expect.poll(ready, { timeout: 5_000, interval: 200 }).toMatchObject({
      statusCode: 503,
      body: { checks: { database: { status: 'down' }, redis: { status: 'up' } } },
    })
    expect(await dependenciesUp()).toEqual({ postgresql: 0, redis: 1 })
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200)
    // A form that came without a token in the outage is told apart for the documented fail-open
    // backend (sdk/README.md), as in a Redis outage: internal-error beside missing-input-response.
    const siteverify = await app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload: { secret: 'tgs_anything', response: '' } })
    expect(siteverify.json()['error-codes']).toEqual(['missing-input-response', 'internal-error'])
    await databaseProxy.restore()
    await expect.poll(ready, { timeout: 10_000, interval: 250 }).toMatchObject({ statusCode: 200 })
  })

  it('starts while Redis is away, says so on /ready, and picks it up once it answers', async () => {
    const redis = new URL(redisUrl)
    const relay = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) })
    await relay.cut()
    redis.host = `127.0.0.1:${relay.port}`
    const keyValue = await openRedisStore({ url: redis.href, keyPrefix: `${schema}:late:`, connectTimeoutMs: 200 })
    const database = await openPostgresDatabase({ connectionString: postgresUrl, schema })
    const config = loadConfig({ NODE_ENV: 'development', TOLLGATE_SECRET: TEST_SECRET })
    // Development seeds the demo site, which announces the change on Redis: that must not stop the start either.
    const late = await buildApp({ config, storage: { database, keyValue }, keyRing: createKeyRing(TEST_SECRET), logger: false })
    try {
      await late.ready()
      const readiness = async () => {
        const response = await late.inject({ method: 'GET', url: '/ready' })
        return { statusCode: response.statusCode, body: response.json<Readiness>() }
      }
      expect(await readiness()).toMatchObject({ statusCode: 503, body: { checks: { database: { status: 'up' }, redis: { status: 'down' } } } })
      await relay.restore()
      await expect.poll(readiness, { timeout: 10_000, interval: 250 }).toMatchObject({ statusCode: 200 })
    } finally {
      await late.close()
      await relay.close()
    }
  }, 20_000)

  it('recovers when the connections to PostgreSQL go silent (no answer, no reset) while new ones would work', async () => {
    // Its own pool, with a 1 s statement timeout so that the client gives up on a silent
    // connection after 6 s rather than 35.
    const database = new URL(postgresUrl)
    const silentProxy = await startTcpProxy({ host: database.hostname, port: Number(database.port || 5432) })
    database.host = `127.0.0.1:${silentProxy.port}`
    const sqlDatabase = await openPostgresDatabase({ connectionString: database.href, schema, maxConnections: 3, statementTimeoutMs: 1_000 })
    const config = loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET })
    const app = await buildApp({ config, storage: { database: sqlDatabase, keyValue: openMemoryStore() }, keyRing: createKeyRing(TEST_SECRET), logger: false })
    try {
      await app.ready()
      // Every connection of the pool is open, as under load; then the route drops their packets.
      await Promise.all([1, 2, 3].map(() => sqlDatabase.query('SELECT pg_sleep(0.05)')))
      silentProxy.silence()
      // A request that needs the database meanwhile is told to retry (503), not that the service broke (500).
      const logIn = app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: 'someone@example.com', password: 'a password of length' } })
      // It, a query and the ping below take the pool's three connections.
      const stuck = sqlDatabase.query('SELECT 1').then(() => 'answered', (error: Error) => error.message)
      await expect(Promise.race([sqlDatabase.ping().then(() => 'up'), new Promise((resolve) => setTimeout(() => resolve('no answer'), 1_000))])).resolves.toBe('no answer')
      // The client stops waiting, drops those connections and opens new ones.
      expect(await stuck).toBe('Query read timeout')
      const refused = await logIn
      expect(refused.statusCode).toBe(503)
      expect(refused.json().error.code).toBe('service_unavailable')
      await expect.poll(() => sqlDatabase.ping().then(() => 'up', () => 'down'), { timeout: 10_000, interval: 250 }).toBe('up')
      expect(await sqlDatabase.query('SELECT 1 AS one')).toEqual([{ one: 1 }])
    } finally {
      // Closes the pool too.
      await app.close()
      await silentProxy.close()
    }
  }, 30_000)

  it('answers 503 when PostgreSQL\'s Unix socket is gone (connect ENOENT), on a dashboard route and on a challenge', async () => {
    // PostgreSQL's socket directory, relayed to the shared server over TCP; closing the relay
    // removes the socket file, as a stopped server does: a new connection fails with ENOENT.
    const directory = await mkdtemp(join(tmpdir(), 'tollgate-socket-'))
    const target = new URL(postgresUrl)
    const connections = new Set<net.Socket>()
    const relay = net.createServer((client) => {
      const upstream = net.connect({ host: target.hostname, port: Number(target.port || 5432) })
      connections.add(client).add(upstream)
      client.on('error', () => upstream.destroy()).on('close', () => upstream.destroy())
      upstream.on('error', () => client.destroy()).on('close', () => client.destroy())
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => relay.listen(join(directory, '.s.PGSQL.5432'), resolve))
    const viaSocket = new URL(`postgres:///${target.pathname.slice(1)}`)
    viaSocket.searchParams.set('host', directory)
    viaSocket.searchParams.set('user', decodeURIComponent(target.username))
    if (target.password !== '') viaSocket.searchParams.set('password', decodeURIComponent(target.password))
    const sqlDatabase = await openPostgresDatabase({ connectionString: viaSocket.href, schema })
    const config = loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET })
    const service = await buildApp({ config, storage: { database: sqlDatabase, keyValue: openMemoryStore() }, keyRing: createKeyRing(TEST_SECRET), logger: false })
    try {
      await service.ready()
      const account = await createTestAccount(service)
      const { site } = await service.sites.create({ accountId: null, name: 'socket' })
      expect((await service.inject({ method: 'GET', url: '/api/v1/sites', headers: asBrowser(account) })).statusCode).toBe(200)
      await new Promise<void>((resolve) => {
        relay.close(() => resolve())
        for (const connection of connections) connection.destroy()
      })
      const answer = async (response: Promise<LightMyRequestResponse>) => {
        const { statusCode, body } = await response
        return [statusCode, (JSON.parse(body) as { error?: { code: string } }).error?.code]
      }
      // Told to retry, as when the server refuses a TCP connection (ECONNREFUSED), not that the service broke.
      expect(await answer(service.inject({ method: 'GET', url: '/api/v1/sites', headers: asBrowser(account) }))).toEqual([503, 'service_unavailable'])
      expect(await answer(service.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey) }))).toEqual([503, 'service_unavailable'])
    } finally {
      await service.close()
      await rm(directory, { recursive: true, force: true })
    }
  }, 30_000)

  /**
   * An app whose Redis is reached through a relay of its own, with a site: `run` gets the relay
   * and a challenge request (its status, error code and duration); everything is closed after.
   */
  async function withRedisRelay(name: string, run: (relay: TcpProxy, challenge: () => Promise<{ statusCode: number; code?: string; ms: number }>) => Promise<void>) {
    const redis = new URL(redisUrl)
    const relay = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) })
    redis.host = `127.0.0.1:${relay.port}`
    const keyValue = await openRedisStore({ url: redis.href, keyPrefix: `${schema}:${name}:` })
    const sqlDatabase = await openPostgresDatabase({ connectionString: postgresUrl, schema })
    const config = loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET })
    const relayed = await buildApp({ config, storage: { database: sqlDatabase, keyValue }, keyRing: createKeyRing(TEST_SECRET), logger: false })
    try {
      await relayed.ready()
      const { site } = await relayed.sites.create({ accountId: null, name })
      await run(relay, async () => {
        const started = performance.now()
        const response = await relayed.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey) })
        return { statusCode: response.statusCode, code: response.statusCode === 200 ? undefined : response.json<{ error: { code: string } }>().error.code, ms: performance.now() - started }
      })
    } finally {
      await relayed.close()
      await relay.close()
    }
  }

  it('answers 503 and recovers when the connection to Redis goes silent (no answer, no reset) while a new one would work', async () => {
    await withRedisRelay('silent', async (relay, challenge) => {
      expect((await challenge()).statusCode).toBe(200)
      relay.silence()
      // Told to retry within seconds (it waited for ever), not that the service broke.
      const refused = await challenge()
      expect(refused).toMatchObject({ statusCode: 503, code: 'service_unavailable' })
      expect(refused.ms).toBeLessThan(5_000)
      // The client drops the silent connection and opens a new one, which works.
      await expect.poll(async () => (await challenge()).statusCode, { timeout: 15_000, interval: 250 }).toBe(200)
    })
  }, 30_000)

  it('answers 503 when the connection to Redis drops with a command in flight', async () => {
    await withRedisRelay('dropped', async (relay, challenge) => {
      expect((await challenge()).statusCode).toBe(200)
      relay.silence()
      const pending = challenge()
      await new Promise((resolve) => setTimeout(resolve, 300))
      await relay.cut()
      expect(await pending).toMatchObject({ statusCode: 503, code: 'service_unavailable' })
    })
  }, 30_000)

  it('answers 503 when PostgreSQL ends the connection of a query under way (a restart, a failover, pg_terminate_backend)', async () => {
    const sqlDatabase = await openPostgresDatabase({ connectionString: postgresUrl, schema })
    const config = loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET })
    const service = await buildApp({ config, storage: { database: sqlDatabase, keyValue: openMemoryStore() }, keyRing: createKeyRing(TEST_SECRET), logger: false })
    try {
      await service.ready()
      let pending: Promise<LightMyRequestResponse> | undefined
      await sqlDatabase.transaction(async (locker) => {
        // The log-in's read waits behind this lock; then its connection is ended.
        await locker.query('LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE')
        const [holder] = await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
        pending = service.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: 'someone@example.com', password: 'a password of length' } })
        await expect.poll(async () => {
          const waiting = await sqlDatabase.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))', [holder?.pid])
          if (waiting[0] !== undefined) await sqlDatabase.query('SELECT pg_terminate_backend($1)', [waiting[0].pid])
          return waiting.length
        }, { timeout: 5_000, interval: 50 }).toBeGreaterThan(0)
      })
      const response = await pending!
      expect(response.statusCode).toBe(503)
      expect(response.json().error.code).toBe('service_unavailable')
    } finally {
      await service.close()
    }
  }, 30_000)
})

describe('which failures are outages (503) rather than bugs (500)', () => {
  const errnoError = (code: string, syscall: string) => Object.assign(new Error(`${syscall} ${code}`), { code, syscall })

  it('counts every network errno of a store connection, and ENOENT only from a connect', () => {
    for (const [code, syscall] of [
      ['ECONNREFUSED', 'connect'], ['EHOSTUNREACH', 'connect'], ['ENETUNREACH', 'connect'], ['EADDRNOTAVAIL', 'connect'],
      ['ECONNABORTED', 'read'], ['EPIPE', 'write'], ['ENOTFOUND', 'getaddrinfo'], ['EAI_AGAIN', 'getaddrinfo'], ['ENOENT', 'connect'],
    ] as const) {
      expect([code, errorCodeOf(errnoError(code, syscall))]).toEqual([code, 'service_unavailable'])
    }
    // A file the code could not open is a bug of ours or of the deployment, not an outage to retry.
    expect(errorCodeOf(errnoError('ENOENT', 'open'))).toBe('internal_error')
  })
})
