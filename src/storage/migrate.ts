import { readdir, readFile } from 'node:fs/promises'
import { StartupError } from '../startup-error.js'
import type { SqlDatabase, SqlExecutor } from './ports.js'

const migrationsDirectory = new URL('../../migrations/', import.meta.url)

/** Any constant works; it only has to be the same for every instance of Tollgate. */
const MIGRATION_LOCK_KEY = 74_116_101

export interface Migration {
  version: number
  name: string
  sql: string
}

export async function readMigrations(directory: URL = migrationsDirectory): Promise<Migration[]> {
  const files = (await readdir(directory)).filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file)).sort()
  return Promise.all(
    files.map(async (file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: await readFile(new URL(file, directory), 'utf8'),
    })),
  )
}

/** The lock, and the versions applied so far (creating their table the first time). */
async function prepare(transaction: SqlExecutor): Promise<{ version: number }[]> {
  await transaction.query('SET LOCAL statement_timeout = 0')
  await transaction.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY])
  await transaction.query(`
    CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
  return transaction.query<{ version: number }>('SELECT version FROM schema_migrations')
}

/** A database error in the operator's terms: a role without the rights to migrate is told which. */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  if ((error as { code?: unknown }).code !== '42501') return message
  return (
    `${message} (the role in DATABASE_URL must be able to create tables in its schema: make it the owner of the ` +
    'database, or GRANT CREATE ON SCHEMA public TO it; PostgreSQL 15 and later no longer grant that to every role)'
  )
}

/**
 * Applies the numbered migrations not applied yet, in order, and returns the versions it applied.
 *
 * Everything happens in one transaction holding a transaction-scoped advisory lock: when two
 * instances start at once, the second waits for the first to commit, then sees every migration
 * as applied. A failing migration rolls back whole, leaving the schema as it was.
 */
export async function migrate(database: SqlDatabase, migrations?: Migration[]): Promise<number[]> {
  const pending = migrations ?? (await readMigrations())
  return database.transaction(
    async (transaction) => {
      // A migration may rewrite a large table, and an instance may wait here for another's: no
      // statement timeout within this transaction.
      const appliedRows = await prepare(transaction).catch((error: unknown) => {
        throw new StartupError(`the database could not be prepared for its migrations: ${describe(error)}`)
      })
      const applied = new Set(appliedRows.map((row) => row.version))
      const appliedNow: number[] = []
      for (const migration of pending) {
        if (applied.has(migration.version)) continue
        for (const [index, statement] of splitStatements(migration.sql).entries()) {
          try {
            await transaction.query(statement)
          } catch (error) {
            // One line for the operator: which file, which statement, and that nothing was kept.
            const file = `${String(migration.version).padStart(3, '0')}_${migration.name}.sql`
            const kept = applied.size === 0 ? 'the database has no schema yet' : `the schema stays at version ${Math.max(...applied)}`
            throw new StartupError(`migration ${file} failed at its statement ${index + 1}: ${describe(error)}; nothing was applied (${kept})`)
          }
        }
        await transaction.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name])
        appliedNow.push(migration.version)
      }
      return appliedNow
    },
    // A migration may rewrite a large table, and an instance may wait here for another's.
    { isUnbounded: true },
  )
}

/**
 * The migrations the database has and this release does not know: a newer release applied them,
 * and this one (rolled back to, or an instance not yet upgraded) serves on a schema ahead of it.
 * Migrations are additive, so that works; the start says so rather than passing over it.
 */
export async function findUnknownMigrations(database: SqlDatabase, migrations?: Migration[]): Promise<{ version: number; name: string }[]> {
  const known = new Set((migrations ?? (await readMigrations())).map((migration) => migration.version))
  const applied = await database.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version')
  return applied.filter((row) => !known.has(row.version))
}

/**
 * Splits a migration into statements on semicolons at the end of a line, outside dollar quotes
 * (`$$ ... $$` or `$tag$ ... $tag$`), so that a function body keeps its own statements. Lines that
 * are comments outside a body are dropped. (Statements run one by one because a transaction
 * client takes one at a time.)
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = []
  let lines: string[] = []
  let openQuote: string | undefined
  const finish = () => {
    const statement = lines.join('\n').trim().replace(/;$/, '').trim()
    if (statement.length > 0) statements.push(statement)
    lines = []
  }
  for (const line of sql.split('\n')) {
    if (openQuote === undefined && /^\s*--/.test(line)) continue
    lines.push(line)
    for (const [quote] of line.matchAll(/\$[A-Za-z_]*\$/g)) {
      if (openQuote === undefined) openQuote = quote
      else if (quote === openQuote) openQuote = undefined
    }
    if (openQuote === undefined && /;\s*$/.test(line)) finish()
  }
  finish()
  return statements
}
