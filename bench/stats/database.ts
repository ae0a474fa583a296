import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate, readMigrations } from '../../src/storage/migrate.js'
import { openPgliteDatabase } from '../../src/storage/pglite/pglite-database.js'
import type { SqlDatabase } from '../../src/storage/ports.js'
import { openPostgresDatabase } from '../../src/storage/postgres/postgres-database.js'

/**
 * Runs `body` on a migrated database of its own: PGlite in a temporary directory, or a schema
 * `bench_<name>_<pid>` of PostgreSQL at `postgresUrl`; either is removed afterwards. With
 * `migratedBelow`, only the migrations before that version are applied (the body applies the rest).
 */
export async function withBenchDatabase(
  kind: 'PGlite' | 'PostgreSQL',
  name: string,
  options: { postgresUrl: string; maxConnections: number; migratedBelow?: number },
  body: (database: SqlDatabase) => Promise<void>,
): Promise<void> {
  const schema = `bench_${name}_${process.pid}`
  const directory = kind === 'PGlite' ? await mkdtemp(join(tmpdir(), `tollgate-bench-${name}-`)) : undefined
  const database = directory === undefined
    ? await openPostgresDatabase({ connectionString: options.postgresUrl, schema, maxConnections: options.maxConnections })
    : await openPgliteDatabase(directory)
  try {
    const { migratedBelow } = options
    await migrate(database, migratedBelow === undefined ? undefined : (await readMigrations()).filter((migration) => migration.version < migratedBelow))
    await body(database)
  } finally {
    if (directory === undefined) await database.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await database.close()
    if (directory !== undefined) await rm(directory, { recursive: true, force: true })
  }
}
