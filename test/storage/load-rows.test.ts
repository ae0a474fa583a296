import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { BulkColumn, SqlDatabase } from '../../src/storage/ports.js'
import { databaseKinds, withTestDatabase } from '../helpers/storage.js'

const columns: BulkColumn[] = [
  { name: 'id', type: 'uuid' },
  { name: 'at', type: 'timestamptz' },
  { name: 'label', type: 'text' },
  { name: 'labels', type: 'text[]' },
  { name: 'small', type: 'int2' },
  { name: 'medium', type: 'int4' },
]

async function createTable(database: SqlDatabase): Promise<void> {
  await database.execute('CREATE TABLE loaded (id uuid PRIMARY KEY, at timestamptz, label text, labels text[], small smallint, medium integer)')
}

interface Loaded {
  id: string
  at: Date | null
  label: string | null
  labels: string[] | null
  small: number | null
  medium: number | null
}

const readLoaded = (database: SqlDatabase) => database.query<Loaded>('SELECT * FROM loaded ORDER BY small NULLS LAST')

describe.each(databaseKinds)('bulk loads (loadRows) on $kind', ({ kind, available }) => {
  it.skipIf(!available)('write every value as PostgreSQL reads it back: nulls, limits, UTF-8, quotes and braces, empty arrays, milliseconds', async () => {
    await withTestDatabase(kind, async (database) => {
      await createTable(database)
      const ids = [randomUUID(), randomUUID().toUpperCase(), randomUUID()]
      const awkward = 'naïve "quoted" \\back\\slash, {braced} ☃ 𝄞 tab\tnewline\n'
      await database.loadRows({
        table: 'loaded',
        columns,
        values: [
          ids,
          [Date.UTC(2026, 10, 27, 21, 45, 12, 345), Date.UTC(1999, 11, 31, 23, 59, 59, 999), null],
          [awkward, '', null],
          [['datacenter_ip', 'vpn_detected'], [], [awkward, 'NULL', '']],
          [-32_768, 32_767, null],
          [-2_147_483_648, 2_147_483_647, null],
        ],
      })
      const rows = await readLoaded(database)
      expect(rows).toEqual([
        { id: ids[0], at: new Date(Date.UTC(2026, 10, 27, 21, 45, 12, 345)), label: awkward, labels: ['datacenter_ip', 'vpn_detected'], small: -32_768, medium: -2_147_483_648 },
        { id: ids[1]?.toLowerCase(), at: new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 999)), label: '', labels: [], small: 32_767, medium: 2_147_483_647 },
        { id: ids[2], at: null, label: null, labels: [awkward, 'NULL', ''], small: null, medium: null },
      ])
    })
  })

  it.skipIf(!available)('keep the elements of text arrays as they are, whatever they hold (separators, NULL, braces, commas)', async () => {
    await withTestDatabase(kind, async (database) => {
      await createTable(database)
      const columnsOfArrays: BulkColumn[] = [{ name: 'id', type: 'uuid' }, { name: 'labels', type: 'text[]' }]
      const arrays = [['NULL', 'null', 'a,b', '{c}', 'd"e'], ['unit\u001fseparator'], [], ['x']]
      const ids = arrays.map(() => randomUUID())
      // Once with the arrays all together, once each alone: how a load sends them may differ.
      await database.loadRows({ table: 'loaded', columns: columnsOfArrays, values: [ids, arrays] })
      for (const labels of arrays) await database.loadRows({ table: 'loaded', columns: columnsOfArrays, values: [[randomUUID()], [labels]] })
      const rows = await database.query<{ labels: string[] }>('SELECT labels FROM loaded')
      expect(rows.map((row) => row.labels).sort()).toEqual([...arrays, ...arrays].sort())
    })
  })

  it.skipIf(!available)('run the statements given first in the same transaction, and undo them when the load fails', async () => {
    await withTestDatabase(kind, async (database) => {
      await createTable(database)
      await database.execute('CREATE TABLE beside (note text)')
      const row = (small: number) => [[randomUUID()], [Date.now()], ['x'], [[]], [small], [1]]
      await database.loadRows({ table: 'loaded', columns, values: row(1) }, [{ sql: 'INSERT INTO beside (note) VALUES ($1)', params: ['kept'] }])
      // 40,000 does not fit a smallint: the load fails as an INSERT would (SQLSTATE 22003), and the
      // statement before it is undone with it.
      await expect(
        database.loadRows({ table: 'loaded', columns, values: row(40_000) }, [{ sql: 'INSERT INTO beside (note) VALUES ($1)', params: ['undone'] }]),
      ).rejects.toMatchObject({ code: '22003' })
      // And so with several statements first (PostgreSQL runs one as part of the load's statement, several before it).
      const twoFirst = (note: string) => [
        { sql: 'INSERT INTO beside (note) VALUES ($1)', params: [`${note} 1`] },
        { sql: 'INSERT INTO beside (note) VALUES ($1)', params: [`${note} 2`] },
      ]
      await database.loadRows({ table: 'loaded', columns, values: row(2) }, twoFirst('kept'))
      await expect(database.loadRows({ table: 'loaded', columns, values: row(40_000) }, twoFirst('undone'))).rejects.toMatchObject({ code: '22003' })
      expect(await database.query('SELECT note FROM beside ORDER BY note')).toEqual([{ note: 'kept' }, { note: 'kept 1' }, { note: 'kept 2' }])
      expect(await database.query('SELECT small FROM loaded ORDER BY small')).toEqual([{ small: 1 }, { small: 2 }])
    })
  })

  it.skipIf(!available)('refuse a value that is not of its column type with a data exception (SQLSTATE class 22)', async () => {
    await withTestDatabase(kind, async (database) => {
      await createTable(database)
      const load = (id: unknown, small: unknown) => database.loadRows({ table: 'loaded', columns, values: [[id], [Date.now()], ['x'], [[]], [small], [1]] })
      await expect(load('not-a-uuid', 1)).rejects.toMatchObject({ code: expect.stringMatching(/^22/) })
      await expect(load(randomUUID(), 1.5)).rejects.toMatchObject({ code: expect.stringMatching(/^22/) })
      expect(await readLoaded(database)).toEqual([])
    })
  })

  it.skipIf(!available)('write a thousand rows in one load', async () => {
    await withTestDatabase(kind, async (database) => {
      await createTable(database)
      const count = 1_000
      const ids = Array.from({ length: count }, () => randomUUID())
      await database.loadRows({
        table: 'loaded',
        columns,
        values: [ids, ids.map((_, index) => 1_700_000_000_000 + index), ids.map((id) => id), ids.map((id) => [id]), ids.map((_, index) => index), ids.map((_, index) => -index)],
      })
      const [summary] = await database.query<{ count: number; matching: number }>(
        `SELECT count(*)::int AS count, count(*) FILTER (WHERE label = id::text AND labels = ARRAY[id::text] AND medium = -small
           AND at = timestamptz 'epoch' + (1700000000000 + small) * interval '1 millisecond')::int AS matching FROM loaded`,
      )
      expect(summary).toEqual({ count, matching: count })
    })
  })
})
