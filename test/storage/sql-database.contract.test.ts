import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate, readMigrations, type Migration } from '../../src/storage/migrate.js'
import { openPgliteDatabase } from '../../src/storage/pglite/pglite-database.js'
import { databaseKinds, openTestDatabase, type TestDatabase } from '../helpers/storage.js'

/** One contract for every SqlDatabase implementation: PGlite and real PostgreSQL alike. */
describe.each(databaseKinds)('SqlDatabase contract on $kind', ({ kind, available }) => {
  let subject: TestDatabase

  beforeAll(async () => {
    if (!available) return
    subject = await openTestDatabase(kind)
  })
  afterAll(async () => {
    if (!available) return
    await subject.database.close()
    await subject.dispose()
  })

  it.skipIf(!available)('reports its kind and answers a ping', async () => {
    expect(subject.database.kind).toBe(kind)
    await expect(subject.database.ping()).resolves.toBeUndefined()
  })

  it.skipIf(!available)('maps types alike: int8 and numeric as numbers, timestamptz as Date, jsonb parsed, arrays', async () => {
    const [row] = await subject.database.query<{ big: number; exact: number; at: Date; doc: unknown; list: string[] }>(
      `SELECT 9007199254740991::int8 AS big, 12.5::numeric AS exact, '2026-01-02T03:04:05.678Z'::timestamptz AS at,
              '{"a":[1,2]}'::jsonb AS doc, ARRAY['x','y']::text[] AS list`,
    )
    expect(row).toEqual({
      big: 9007199254740991,
      exact: 12.5,
      at: new Date('2026-01-02T03:04:05.678Z'),
      doc: { a: [1, 2] },
      list: ['x', 'y'],
    })
  })

  it.skipIf(!available)('binds parameters, never interpolates them', async () => {
    const hostile = "'); DROP TABLE sites; --"
    const [row] = await subject.database.query<{ value: string }>('SELECT $1::text AS value', [hostile])
    expect(row?.value).toBe(hostile)
    await expect(subject.database.query('SELECT count(*) FROM sites')).resolves.toHaveLength(1)
  })

  it.skipIf(!available)('commits a transaction that resolves', async () => {
    await subject.database.execute('CREATE TABLE committed_rows (id int PRIMARY KEY)')
    await subject.database.transaction(async (transaction) => {
      await transaction.query('INSERT INTO committed_rows VALUES (1), (2)')
    })
    const rows = await subject.database.query('SELECT id FROM committed_rows ORDER BY id')
    expect(rows).toEqual([{ id: 1 }, { id: 2 }])
  })

  it.skipIf(!available)('rolls back a transaction that throws, and rethrows', async () => {
    await subject.database.execute('CREATE TABLE rolled_back_rows (id int PRIMARY KEY)')
    const failure = new Error('stop here')
    await expect(
      subject.database.transaction(async (transaction) => {
        await transaction.query('INSERT INTO rolled_back_rows VALUES (1)')
        throw failure
      }),
    ).rejects.toBe(failure)
    expect(await subject.database.query('SELECT id FROM rolled_back_rows')).toEqual([])
  })

  it.skipIf(!available)('reports a constraint violation as an error with the SQLSTATE code', async () => {
    await subject.database.execute('CREATE TABLE unique_rows (id int PRIMARY KEY)')
    await subject.database.query('INSERT INTO unique_rows VALUES (1)')
    await expect(subject.database.query('INSERT INTO unique_rows VALUES (1)')).rejects.toMatchObject({ code: '23505' })
  })

  it.skipIf(!available)('reports a failing COMMIT (a deferred constraint) with its code, and keeps nothing', async () => {
    await subject.database.execute('CREATE TABLE deferred_rows (id int, CONSTRAINT deferred_unique UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)')
    await expect(
      subject.database.transaction(async (transaction) => {
        await transaction.query('INSERT INTO deferred_rows VALUES (1)')
        await transaction.query('INSERT INTO deferred_rows VALUES (1)')
        return 'written'
      }),
    ).rejects.toMatchObject({ code: '23505' })
    expect(await subject.database.query('SELECT id FROM deferred_rows')).toEqual([])
  })

  it.skipIf(!available)('runs a transaction\'s statements in order, and a statement sent meanwhile outside it still gets its answer', async () => {
    await subject.database.execute('CREATE TABLE ordered_rows (position serial PRIMARY KEY, label text)')
    const labels = ['a', 'b', 'c', 'd', 'e']
    const [, outside] = await Promise.all([
      subject.database.transaction(async (transaction) => {
        for (const label of labels) await transaction.query('INSERT INTO ordered_rows (label) VALUES ($1)', [label])
      }),
      subject.database.query<{ one: number }>('SELECT 1 AS one'),
    ])
    expect(outside).toEqual([{ one: 1 }])
    const rows = await subject.database.query<{ label: string }>('SELECT label FROM ordered_rows ORDER BY position')
    expect(rows.map((row) => row.label)).toEqual(labels)
  })

  it.skipIf(!available)('refuses statements after close instead of hanging', async () => {
    const other = await openTestDatabase(kind, { migrated: false })
    await other.database.close()
    await expect(other.database.query('SELECT 1')).rejects.toThrow()
    await other.dispose()
  })

  it.skipIf(!available)('closes once however often close is called, at once or in turn', async () => {
    const other = await openTestDatabase(kind, { migrated: false })
    await expect(Promise.all([other.database.close(), other.database.close()])).resolves.toEqual([undefined, undefined])
    await expect(other.database.close()).resolves.toBeUndefined()
    await other.dispose()
  })

  it.skipIf(!available)('has every migration applied once, and re-running applies nothing', async () => {
    const migrations = await readMigrations()
    const rows = await subject.database.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')
    expect(rows.map((row) => row.version)).toEqual(migrations.map((migration) => migration.version))
    expect(await migrate(subject.database)).toEqual([])
  })

  it.skipIf(!available)('rolls back a failing migration whole, and says in one line which one failed where, and that nothing was kept', async () => {
    const broken = [{ version: 900, name: 'broken', sql: 'CREATE TABLE half_made (id int);\nSELECT * FROM no_such_table;' }]
    const latest = Math.max(...(await readMigrations()).map((migration) => migration.version))
    await expect(migrate(subject.database, broken)).rejects.toThrow(
      new RegExp(`^migration 900_broken\\.sql failed at its statement 2: relation "no_such_table" does not exist; nothing was applied \\(the schema stays at version ${latest}\\)$`),
    )
    const tables = await subject.database.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'half_made'")
    expect(tables).toEqual([])
    const versions = await subject.database.query('SELECT 1 FROM schema_migrations WHERE version = 900')
    expect(versions).toEqual([])
  })
})

describe.skipIf(!databaseKinds[1]?.available)('migrations on PostgreSQL', () => {
  it('cancels a statement that runs past the statement timeout (57014), but not a migration', async () => {
    const first = await openTestDatabase('postgres', { migrated: false })
    const { openPostgresDatabase } = await import('../../src/storage/postgres/postgres-database.js')
    const { postgresUrl } = await import('../helpers/services.js')
    const schema = (await first.database.query<{ schema: string }>('SELECT current_schema() AS schema'))[0]?.schema ?? ''
    const hurried = await openPostgresDatabase({ connectionString: postgresUrl, schema, statementTimeoutMs: 200 })
    try {
      await expect(hurried.query('SELECT pg_sleep(1)')).rejects.toMatchObject({ code: '57014' })
      const slow: Migration = { version: 901, name: 'slow', sql: 'SELECT pg_sleep(0.5);' }
      expect(await migrate(hurried, [slow])).toEqual([901])
      // The lifted limit was the migration's own: the pool's next statement has it again.
      await expect(hurried.query('SELECT pg_sleep(1)')).rejects.toMatchObject({ code: '57014' })
    } finally {
      await Promise.all([first.database.close(), hurried.close()])
      await first.dispose()
    }
  })

  it('two instances migrating one database at once apply each migration exactly once', async () => {
    const first = await openTestDatabase('postgres', { migrated: false })
    const { openPostgresDatabase } = await import('../../src/storage/postgres/postgres-database.js')
    const { postgresUrl } = await import('../helpers/services.js')
    const schema = (await first.database.query<{ schema: string }>('SELECT current_schema() AS schema'))[0]?.schema ?? ''
    const second = await openPostgresDatabase({ connectionString: postgresUrl, schema })
    try {
      const [appliedByFirst, appliedBySecond] = await Promise.all([migrate(first.database), migrate(second)])
      const migrations = await readMigrations()
      expect([...appliedByFirst, ...appliedBySecond].sort((a, b) => a - b)).toEqual(migrations.map((migration) => migration.version))
      const rows = await first.database.query('SELECT version FROM schema_migrations')
      expect(rows).toHaveLength(migrations.length)
    } finally {
      await Promise.all([first.database.close(), second.close()])
      await first.dispose()
    }
  })
})

describe('PGlite in its own thread', () => {
  it('probes with a write (ping): on a full disk it answers reads while every write fails, and /ready must say so', async () => {
    const { database } = await openTestDatabase('pglite', { migrated: false })
    const transactionId = async () => Number((await database.query<{ id: string }>('SELECT txid_current()::text AS id'))[0]?.id)
    try {
      const before = await transactionId()
      await database.ping()
      await database.ping()
      // Each probe took a transaction id of its own, whose commit goes to the write-ahead log.
      expect((await transactionId()) - before).toBeGreaterThanOrEqual(3)
    } finally {
      await database.close()
    }
  })

  it('fails to open with an error that names the data directory', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'tollgate-pglite-'))
    const notADirectory = join(directory, 'file')
    await writeFile(notADirectory, 'not a database')
    try {
      await expect(openPgliteDatabase(notADirectory)).rejects.toThrow(`could not open the embedded database in ${notADirectory}`)
    } finally {
      await rm(directory, { recursive: true, force: true })
    }
  })

  it('keeps the event loop free while a long statement runs', async () => {
    const { database } = await openTestDatabase('pglite', { migrated: false })
    try {
      let last = performance.now()
      let longestGap = 0
      let ticks = 0
      const timer = setInterval(() => {
        const now = performance.now()
        longestGap = Math.max(longestGap, now - last)
        last = now
        ticks++
      }, 5)
      const started = performance.now()
      const [row] = await database.query<{ total: number }>('SELECT sum(value)::int8 AS total FROM generate_series(1, 2000000) AS value')
      const took = performance.now() - started
      clearInterval(timer)
      expect(row?.total).toBe(2_000_001_000_000)
      // On the event loop's own thread the timer could not fire until the statement ended.
      expect(ticks).toBeGreaterThanOrEqual(3)
      expect(longestGap).toBeLessThan(took / 2)
    } finally {
      await database.close()
    }
  })
})
