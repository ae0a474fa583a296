/**
 * npm run data -- copy --from <DATA_DIR, or its pglite directory> --to <PostgreSQL URL> [--replace]
 *
 * Moves a service that started on the embedded database (npm install && npm start: PGlite in
 * DATA_DIR) to PostgreSQL. pg_dump cannot read PGlite's files (PostgreSQL 18 in WebAssembly), so
 * the rows are copied: the source is opened as the server opens it (its DATA_DIR lock refuses a
 * source in use) and brought up to this release's schema; the target is migrated by the service's
 * own migration runner, then every table is copied in dependency order, in batches, in one
 * transaction, with the tables' own triggers off (the statistics' rollups are copied as they are
 * rather than counted twice), its sequences set past the rows copied, and each table's row count
 * compared with the source's before the transaction commits. A target holding an account or a
 * site is refused unless --replace (which empties it first). The webhook and authenticator secrets
 * are sealed under TOLLGATE_SECRET: the output says which secret production must start with.
 */
import { existsSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { storedSecretFile } from '../src/secret.js'
import { migrate } from '../src/storage/migrate.js'
import { openDatabase } from '../src/storage/open-storage.js'
import type { SqlDatabase, SqlExecutor } from '../src/storage/ports.js'
import { quoteIdentifier } from '../src/storage/quote-identifier.js'
import { urlWithoutPassword } from '../src/storage/url-without-password.js'
import { runOperatorScript, UsageError } from './operator-input.js'

const USAGE = [
  'usage: npm run data -- copy --from <DATA_DIR> --to <postgres://user:password@host/database> [--replace]',
  '  copy  copies the embedded database in DATA_DIR (or the pglite directory inside it) into PostgreSQL, for a move to',
  '        production on PostgreSQL. Stop the server first: a DATA_DIR in use is refused. The target is migrated first;',
  '        one that holds an account or a site is refused unless --replace, which empties it. Every table is copied in one',
  '        transaction and its row count checked. Redis is not copied: it holds only short-lived state.',
].join('\n')

/** Rows read and written per statement. */
const BATCH_ROWS = 1_000

/** DATA_DIR, from it or from its pglite directory; refused when neither holds an embedded database. */
function dataDirectoryOf(from: string): string {
  const path = resolve(from)
  if (existsSync(join(path, 'pglite'))) return path
  if (basename(path) === 'pglite' && existsSync(join(path, 'PG_VERSION'))) return dirname(path)
  throw new UsageError(`${path} holds no embedded database (DATA_DIR, with its pglite directory, as npm start made it)`)
}

interface Column {
  name: string
  /** The column's type as SQL writes it (format_type), for the cast from its text form. */
  type: string
}

interface Table {
  name: string
  columns: Column[]
  /** The tables its foreign keys point at. */
  references: string[]
}

/** The service's tables (the migration runner's own aside), with the columns a row is written with. */
async function readTables(source: SqlExecutor): Promise<Table[]> {
  const columns = await source.query<{ table: string; name: string; type: string }>(
    `SELECT c.relname AS table, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname <> 'schema_migrations'
        AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      ORDER BY c.relname, a.attnum`,
  )
  const references = await source.query<{ table: string; referenced: string }>(
    `SELECT DISTINCT c.conrelid::regclass::text AS table, c.confrelid::regclass::text AS referenced
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE c.contype = 'f' AND n.nspname = current_schema() AND c.conrelid <> c.confrelid`,
  )
  const tables = new Map<string, Table>()
  for (const column of columns) {
    const table = tables.get(column.table) ?? { name: column.table, columns: [], references: [] }
    table.columns.push({ name: column.name, type: column.type })
    tables.set(column.table, table)
  }
  for (const { table, referenced } of references) tables.get(table)?.references.push(referenced)
  return inDependencyOrder([...tables.values()])
}

/** Each table after those its foreign keys point at, so that every row finds the one it references. */
function inDependencyOrder(tables: Table[]): Table[] {
  const ordered: Table[] = []
  const placed = new Set<string>()
  const place = (table: Table, path: Set<string>) => {
    if (placed.has(table.name) || path.has(table.name)) return
    path.add(table.name)
    for (const name of table.references) {
      const referenced = tables.find((other) => other.name === name)
      if (referenced !== undefined) place(referenced, path)
    }
    placed.add(table.name)
    ordered.push(table)
  }
  for (const table of [...tables].sort((a, b) => a.name.localeCompare(b.name))) place(table, new Set())
  return ordered
}

async function countRows(executor: SqlExecutor, table: string): Promise<number> {
  const [row] = await executor.query<{ count: number }>(`SELECT count(*)::int8 AS count FROM ${quoteIdentifier(table)}`)
  return Number(row?.count ?? 0)
}

/** What in the target stands in the way: its accounts and sites (anything else a first start writes goes). */
async function findOwnData(target: SqlExecutor): Promise<string | undefined> {
  const accounts = await countRows(target, 'accounts')
  const sites = await countRows(target, 'sites')
  return accounts + sites === 0 ? undefined : `${accounts} account(s) and ${sites} site(s)`
}

/**
 * Copies one table: its rows read through a cursor in their text form (the exact value, to the
 * microsecond, whatever its type) and written a batch at a time, each column cast back to its type.
 */
async function copyTable(source: SqlDatabase, target: SqlExecutor, table: Table): Promise<void> {
  const names = table.columns.map((column) => quoteIdentifier(column.name))
  const texts = table.columns.map((column) => `${quoteIdentifier(column.name)}::text`)
  const arrays = table.columns.map((_column, index) => `$${index + 1}::text[]`)
  const casts = table.columns.map((column, index) => `c${index}::${column.type}`)
  const aliases = table.columns.map((_column, index) => `c${index}`)
  const insert =
    `INSERT INTO ${quoteIdentifier(table.name)} (${names.join(', ')}) OVERRIDING SYSTEM VALUE ` +
    `SELECT ${casts.join(', ')} FROM unnest(${arrays.join(', ')}) AS batch(${aliases.join(', ')})`
  await source.transaction(async (reading) => {
    await reading.query(`DECLARE rows_to_copy NO SCROLL CURSOR FOR SELECT ${texts.join(', ')} FROM ${quoteIdentifier(table.name)}`)
    for (;;) {
      const rows = await reading.query<Record<string, string | null>>(`FETCH ${BATCH_ROWS} FROM rows_to_copy`)
      if (rows.length === 0) break
      await target.query(insert, table.columns.map((column) => rows.map((row) => row[column.name] ?? null)))
    }
  })
}

/** Every sequence of the target's tables (serial and identity columns) set past the rows copied. */
async function resetSequences(target: SqlExecutor): Promise<void> {
  const owned = await target.query<{ table: string; column: string; sequence: string }>(
    `SELECT t.relname AS table, a.attname AS column, s.oid::regclass::text AS sequence
       FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
       JOIN pg_class t ON t.oid = d.refobjid JOIN pg_namespace n ON n.oid = t.relnamespace
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
      WHERE d.deptype IN ('a', 'i') AND n.nspname = current_schema()`,
  )
  for (const { table, column, sequence } of owned) {
    await target.query(
      `SELECT setval($1::regclass, coalesce((SELECT max(${quoteIdentifier(column)}) FROM ${quoteIdentifier(table)}), 0) + 1, false)`,
      [sequence],
    )
  }
}

interface Copied {
  table: string
  rows: number
}

/**
 * The copy itself, in one transaction on the target: emptied, filled table by table with the
 * tables' own triggers off (ALTER TABLE, which the role that migrates may do, where
 * session_replication_role needs a superuser), its sequences reset, and every count checked.
 */
async function copyAll(source: SqlDatabase, target: SqlDatabase, replace: boolean): Promise<Copied[]> {
  const tables = await readTables(source)
  return target.transaction(
    async (transaction) => {
      const own = await findOwnData(transaction)
      if (own !== undefined && !replace) {
        throw new UsageError(`the target already holds ${own}: nothing was copied (add --replace to empty it first, or give an empty database)`)
      }
      const list = tables.map((table) => quoteIdentifier(table.name)).join(', ')
      // What a start on the target wrote (its secret check, its network data) goes too: the source's takes its place.
      await transaction.query(`TRUNCATE ${list} RESTART IDENTITY CASCADE`)
      for (const table of tables) await transaction.query(`ALTER TABLE ${quoteIdentifier(table.name)} DISABLE TRIGGER USER`)
      for (const table of tables) await copyTable(source, transaction, table)
      for (const table of tables) await transaction.query(`ALTER TABLE ${quoteIdentifier(table.name)} ENABLE TRIGGER USER`)
      await resetSequences(transaction)
      const copied: Copied[] = []
      const differing: string[] = []
      for (const table of tables) {
        const [expected, found] = [await countRows(source, table.name), await countRows(transaction, table.name)]
        if (expected !== found) differing.push(`${table.name} (${expected} in the source, ${found} copied)`)
        copied.push({ table: table.name, rows: found })
      }
      if (differing.length > 0) throw new UsageError(`the copy's row counts differ, so nothing was kept: ${differing.join(', ')}`)
      return copied
    },
    { isUnbounded: true },
  )
}

async function copy(from: string, to: string, replace: boolean): Promise<string> {
  const dataDirectory = dataDirectoryOf(from)
  const targetName = urlWithoutPassword(to)
  // As the server opens it: DATA_DIR's lock refuses a source a running server holds.
  const source = await openDatabase({ dataDirectory, databaseUrl: undefined })
  try {
    await migrate(source)
    const target = await openDatabase({ dataDirectory, databaseUrl: to })
    try {
      await migrate(target)
      const copied = await copyAll(source, target, replace)
      const secretFile = storedSecretFile(dataDirectory)
      const width = Math.max(...copied.map(({ table }) => table.length))
      return [
        `copied ${join(dataDirectory, 'pglite')} into PostgreSQL at ${targetName}; rows per table, each the same as in the source:`,
        ...copied.map(({ table, rows }) => `  ${table.padEnd(width)}  ${rows}`),
        'webhook secrets and authenticator secrets (two-factor) are sealed under the secret the embedded database went with:',
        existsSync(secretFile)
          ? `  start production with it: TOLLGATE_SECRET="$(cat ${secretFile})" DATABASE_URL=... npm start`
          : '  start production with the TOLLGATE_SECRET the embedded server ran with',
        `  to use a new secret, first run, with that one: DATABASE_URL=... TOLLGATE_SECRET=... npm run secret -- change`,
        'not copied, as the embedded server kept them in its memory (and Redis keeps them only briefly): challenges not yet answered,',
        'tokens not yet redeemed with Siteverify (their visitors solve again), and rate-limit counters (which start afresh)',
      ].join('\n')
    } finally {
      await target.close()
    }
  } finally {
    await source.close()
  }
}

async function run(args: string[]): Promise<string> {
  const [command, ...rest] = args
  if (command === '--help' || command === '-h') return USAGE
  if (command !== 'copy') throw new UsageError(USAGE)
  let values: { from?: string; to?: string; replace?: boolean }
  try {
    ;({ values } = parseArgs({ args: rest, options: { from: { type: 'string' }, to: { type: 'string' }, replace: { type: 'boolean' } } }))
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`)
  }
  if (values.from === undefined || values.to === undefined) throw new UsageError(USAGE)
  if (!/^postgres(ql)?:\/\//.test(values.to)) throw new UsageError('--to must be a PostgreSQL URL (postgres://user:password@host:5432/database)')
  return copy(values.from, values.to, values.replace === true)
}

await runOperatorScript('data', () => run(process.argv.slice(2)))
