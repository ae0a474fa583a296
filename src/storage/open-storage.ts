import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from '../config.js'
import { StartupError } from '../startup-error.js'
import { openMemoryStore } from './memory/memory-store.js'
import { migrate } from './migrate.js'
import { openPgliteDatabase } from './pglite/pglite-database.js'
import type { KeyValueStore, SqlDatabase, Storage } from './ports.js'
import { openPostgresDatabase } from './postgres/postgres-database.js'
import { openRedisStore } from './redis/redis-store.js'

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Takes DATA_DIR's embedded database for this process: PGlite serves one process, and a second
 * one on the same files would start, answer, and lose its writes to the first. The lock is a file
 * with the holder's pid; one left by a process that is gone (a crash, a killed container) is
 * taken over. Returns what releases it.
 */
export async function lockDataDirectory(directory: string): Promise<() => Promise<void>> {
  const file = join(directory, 'tollgate.lock')
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx' })
      return () => rm(file, { force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim())
      if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && isRunning(holder)) {
        throw new StartupError(
          `DATA_DIR ${directory} is in use by another Tollgate process (pid ${holder}); stop it, or give this one another DATA_DIR (or DATABASE_URL)`,
        )
      }
      if (attempt > 0) throw new StartupError(`DATA_DIR ${directory}: could not take its lock file ${file}`)
      await rm(file, { force: true })
    }
  }
}

/**
 * PostgreSQL, once it has answered: whatever stops the first connection (no answer, a refused
 * role or password, no such database, TLS the server does not speak, not PostgreSQL at all) is
 * the operator's to mend, and is told in one line.
 */
async function connectPostgres(connectionString: string): Promise<SqlDatabase> {
  const database = await openPostgresDatabase({ connectionString })
  try {
    await database.ping()
  } catch (error) {
    await database.close().catch(() => undefined)
    throw new StartupError(`DATABASE_URL: PostgreSQL cannot be used: ${(error as Error).message}`)
  }
  return database
}

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDirectory'>): Promise<SqlDatabase> {
  if (config.databaseUrl !== undefined) return connectPostgres(config.databaseUrl)
  const directory = join(config.dataDirectory, 'pglite')
  await mkdir(directory, { recursive: true })
  const unlock = await lockDataDirectory(config.dataDirectory)
  try {
    const database = await openPgliteDatabase(directory)
    return {
      ...database,
      async close() {
        await database.close()
        await unlock()
      },
    }
  } catch (error) {
    await unlock()
    throw error
  }
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
