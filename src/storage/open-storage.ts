import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from '../config.js'
import { openMemoryStore } from './memory/memory-store.js'
import { migrate } from './migrate.js'
import { openPgliteDatabase } from './pglite/pglite-database.js'
import type { KeyValueStore, SqlDatabase, Storage } from './ports.js'
import { openPostgresDatabase } from './postgres/postgres-database.js'
import { openRedisStore } from './redis/redis-store.js'

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDirectory'>): Promise<SqlDatabase> {
  if (config.databaseUrl !== undefined) return openPostgresDatabase({ connectionString: config.databaseUrl })
  const directory = join(config.dataDirectory, 'pglite')
  await mkdir(directory, { recursive: true })
  return openPgliteDatabase(directory)
}

export async function openKeyValueStore(config: Pick<Config, 'redisUrl'>): Promise<KeyValueStore> {
  if (config.redisUrl !== undefined) return openRedisStore({ url: config.redisUrl, keyPrefix: 'tollgate:' })
  return openMemoryStore()
}

/** Opens both stores the configuration names and brings the schema up to date. */
export async function openStorage(config: Pick<Config, 'databaseUrl' | 'dataDirectory' | 'redisUrl'>): Promise<Storage> {
  const database = await openDatabase(config)
  try {
    await migrate(database)
    return { database, keyValue: await openKeyValueStore(config) }
  } catch (error) {
    await database.close()
    throw error
  }
}
