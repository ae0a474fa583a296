import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll } from 'vitest'
import { openMemoryStore } from '../../src/storage/memory/memory-store.js'
import { migrate } from '../../src/storage/migrate.js'
import { openPgliteDatabase } from '../../src/storage/pglite/pglite-database.js'
import type { KeyValueStore, SqlDatabase } from '../../src/storage/ports.js'
import { openPostgresDatabase } from '../../src/storage/postgres/postgres-database.js'
import { openRedisStore } from '../../src/storage/redis/redis-store.js'
import { hasPostgres, hasRedis, postgresUrl, redisUrl } from './services.js'

export type DatabaseKind = 'pglite' | 'postgres'
export type KeyValueKind = 'memory' | 'redis'

/** Every database implementation, with whether it can run here (see services.ts). */
export const databaseKinds: { kind: DatabaseKind; available: boolean }[] = [
  { kind: 'pglite', available: true },
  { kind: 'postgres', available: hasPostgres },
]
export const keyValueKinds: { kind: KeyValueKind; available: boolean }[] = [
  { kind: 'memory', available: true },
  { kind: 'redis', available: hasRedis },
]

export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`
}

export interface TestDatabase {
  database: SqlDatabase
  /** Removes everything the test created (the schema on PostgreSQL). Call after closing. */
  dispose: () => Promise<void>
}

/** A fresh database: in-memory PGlite, or a new schema in the shared PostgreSQL database. */
export async function openTestDatabase(kind: DatabaseKind, options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const database = await openPgliteDatabase(undefined)
    if (options.migrated !== false) await migrate(database)
    return { database, dispose: async () => {} }
  }
  const schema = uniqueName('test')
  const database = await openPostgresDatabase({ connectionString: postgresUrl, schema, maxConnections: 5 })
  if (options.migrated !== false) await migrate(database)
  return { database, dispose: () => dropSchema(schema) }
}

/**
 * For a describe block of a contract suite: a fresh database of `kind` opened before its tests (when
 * `available`), closed and removed after them. Read `subject.database` inside tests and later hooks.
 */
export function databaseForSuite(kind: DatabaseKind, available: boolean): { readonly database: SqlDatabase } {
  let opened: TestDatabase | undefined
  beforeAll(async () => {
    if (available) opened = await openTestDatabase(kind)
  })
  afterAll(async () => {
    await opened?.database.close()
    await opened?.dispose()
  })
  return {
    get database() {
      if (opened === undefined) throw new Error('the database is open inside the tests of an available kind only')
      return opened.database
    },
  }
}

/** Runs `use` on a fresh database (openTestDatabase), closed and removed afterwards. */
export async function withTestDatabase(kind: DatabaseKind, use: (database: SqlDatabase) => Promise<void>, options: { migrated?: boolean } = {}): Promise<void> {
  const { database, dispose } = await openTestDatabase(kind, options)
  try {
    await use(database)
  } finally {
    await database.close()
    await dispose()
  }
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}

export interface TestKeyValue {
  keyValue: KeyValueStore
  /** Redis's key prefix, for a second instance on the same keys ('' in memory). */
  prefix: string
  dispose: () => Promise<void>
}

/** A fresh key-value store: memory, or real Redis under a random key prefix. */
export async function openTestKeyValue(kind: KeyValueKind): Promise<TestKeyValue> {
  if (kind === 'memory') return { keyValue: openMemoryStore(), prefix: '', dispose: async () => {} }
  const keyPrefix = `${uniqueName('test')}:`
  const keyValue = await openRedisStore({ url: redisUrl, keyPrefix })
  return { keyValue, prefix: keyPrefix, dispose: () => deleteRedisPrefix(keyPrefix) }
}

async function deleteRedisPrefix(keyPrefix: string): Promise<void> {
  const { Redis } = await import('ioredis')
  const client = new Redis(redisUrl)
  try {
    let cursor = '0'
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 500)
      cursor = next
      if (keys.length > 0) await client.del(...keys)
    } while (cursor !== '0')
  } finally {
    client.disconnect()
  }
}

/**
 * For a describe block of a contract suite: a fresh store of `kind` opened before its tests (when
 * `available`), closed and its keys removed after them. Read `subject.keyValue` inside tests.
 */
export function keyValueForSuite(kind: KeyValueKind, available: boolean): { readonly keyValue: KeyValueStore } {
  let opened: TestKeyValue | undefined
  beforeAll(async () => {
    if (available) opened = await openTestKeyValue(kind)
  })
  afterAll(async () => {
    await opened?.keyValue.close()
    await opened?.dispose()
  })
  return {
    get keyValue() {
      if (opened === undefined) throw new Error('the store is open inside the tests of an available kind only')
      return opened.keyValue
    },
  }
}
