import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createKeyRing } from '../../src/secret.js'
import { StartupError } from '../../src/startup-error.js'
import { migrate } from '../../src/storage/migrate.js'
import { openPgliteDatabase } from '../../src/storage/pglite/pglite-database.js'
import { openRedisStore } from '../../src/storage/redis/redis-store.js'
import { hasRedis, redisUrl } from '../helpers/services.js'
import { uniqueName } from '../helpers/storage.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'
import { TEST_SECRET } from '../helpers/test-app.js'

/** REDIS_URL's database number, as operators separate deployments sharing one server with it. */
describe.skipIf(!hasRedis)('the database of REDIS_URL', () => {
  const urlOf = (database: number) => {
    const url = new URL(redisUrl)
    url.pathname = `/${database}`
    return url.toString()
  }

  it('keeps the keys in the database the URL names', async () => {
    const keyPrefix = `${uniqueName('test')}:`
    const store = await openRedisStore({ url: urlOf(3), keyPrefix })
    const direct = new Redis(urlOf(3))
    try {
      await store.set('where', 'here', 60_000)
      expect(await direct.get(`${keyPrefix}where`)).toBe('here')
    } finally {
      await direct.del(`${keyPrefix}where`)
      direct.disconnect()
      await store.close()
    }
  })

  it.each([
    ['in the path', () => urlOf(9999)],
    ['as ?db=', (url: string) => `${url.replace(/\/\d*$/, '')}?db=9999`],
  ])('refuses to start on a database the server does not have, named %s, instead of carrying on in database 0', async (_how, urlFor) => {
    const opening = openRedisStore({ url: urlFor(redisUrl), keyPrefix: `${uniqueName('test')}:` })
    await expect(opening).rejects.toBeInstanceOf(StartupError)
    await expect(opening).rejects.toThrow(/^REDIS_URL names database 9999, which this Redis server refuses/)
  })

  it('stays unused, and says why on /ready, when the database is refused on a connection made after the start (Redis was away then)', async () => {
    const redis = new URL(urlOf(9999))
    const relay = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) })
    await relay.cut()
    redis.host = `127.0.0.1:${relay.port}`
    const keyValue = await openRedisStore({ url: redis.href, keyPrefix: `${uniqueName('test')}:`, connectTimeoutMs: 200 })
    const database = await openPgliteDatabase(undefined)
    await migrate(database)
    const app = await buildApp({ config: loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET }), storage: { database, keyValue }, keyRing: createKeyRing(TEST_SECRET), logger: false })
    try {
      await relay.restore()
      const redisCheck = async () => (await app.inject({ method: 'GET', url: '/ready' })).json<{ checks: { redis: { status: string; error?: string } } }>().checks.redis
      await expect.poll(redisCheck, { timeout: 10_000, interval: 200 }).toEqual(expect.objectContaining({
        status: 'down',
        error: expect.stringMatching(/^REDIS_URL names database 9999, which this Redis server refuses .*and restart$/),
      }))
      // Nothing reaches database 0 meanwhile: a write fails instead.
      await expect(keyValue.set('where', 'nowhere', 60_000)).rejects.toThrow()
    } finally {
      await app.close()
      await relay.close()
    }
  }, 20_000)
})
