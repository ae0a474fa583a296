import { buildApp, type App, type AppOptions } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createKeyRing } from '../../src/secret.js'
import { migrate } from '../../src/storage/migrate.js'
import { openPostgresDatabase } from '../../src/storage/postgres/postgres-database.js'
import { openRedisStore, type RedisStoreOptions } from '../../src/storage/redis/redis-store.js'
import { postgresUrl, redisUrl } from './services.js'
import { onClockSkewedBy } from './skewed-clock.js'
import { dropSchema, uniqueName } from './storage.js'
import { TEST_SECRET } from './test-app.js'

export interface SharedInstances {
  instances: App[]
  close(): Promise<void>
}

/**
 * Several instances of the service as production runs them: each with its own connections to one
 * real PostgreSQL schema and one Redis key prefix, sharing nothing in memory. `storeOptions` may
 * give an instance's Redis store other options (another server's url, its epoch check interval).
 * `clockSkewMs` puts an instance on a machine whose clock is that far off (onClockSkewedBy): its
 * requests must then be injected within onClockSkewedBy with the same skew.
 */
export async function buildSharedInstances(
  count: number,
  env: Record<string, string> = {},
  options: Pick<AppOptions, 'surgeFlushIntervalMs' | 'logger'> = {},
  storeOptions: (index: number) => Partial<RedisStoreOptions> = () => ({}),
  clockSkewMs: (index: number) => number = () => 0,
): Promise<SharedInstances> {
  const schema = uniqueName('test')
  const keyPrefix = `${uniqueName('test')}:`
  const config = loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET, RATE_LIMIT_PER_MINUTE: '0', ...env })
  const instances: App[] = []
  for (let index = 0; index < count; index++) {
    const build = async () => {
      const database = await openPostgresDatabase({ connectionString: postgresUrl, schema, maxConnections: 5 })
      if (index === 0) await migrate(database)
      const keyValue = await openRedisStore({ url: redisUrl, keyPrefix, ...storeOptions(index) })
      const app = await buildApp({ config, storage: { database, keyValue }, keyRing: createKeyRing(TEST_SECRET), logger: false, ...options })
      await app.ready()
      return app
    }
    const skewMs = clockSkewMs(index)
    instances.push(skewMs === 0 ? await build() : await onClockSkewedBy(skewMs, build))
  }
  return {
    instances,
    async close() {
      await Promise.all(instances.map((app) => app.close()))
      await dropSchema(schema)
      await deleteKeys(keyPrefix)
    },
  }
}

async function deleteKeys(keyPrefix: string): Promise<void> {
  const { Redis } = await import('ioredis')
  const client = new Redis(redisUrl)
  try {
    const keys = await client.keys(`${keyPrefix}*`)
    if (keys.length > 0) await client.del(...keys)
  } finally {
    client.disconnect()
  }
}
