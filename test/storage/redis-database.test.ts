import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { StartupError } from '../../src/startup-error.js'
import { openRedisStore } from '../../src/storage/redis/redis-store.js'
import { hasRedis, redisUrl } from '../helpers/services.js'
import { uniqueName } from '../helpers/storage.js'

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

  it('refuses to start on a database the server does not have, instead of carrying on in database 0', async () => {
    const opening = openRedisStore({ url: urlOf(9999), keyPrefix: `${uniqueName('test')}:` })
    await expect(opening).rejects.toBeInstanceOf(StartupError)
    await expect(opening).rejects.toThrow(/^REDIS_URL names database 9999, which this Redis server refuses/)
  })
})
