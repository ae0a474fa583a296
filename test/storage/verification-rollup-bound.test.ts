import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { OTHER_ROLLUP_VALUE, ROLLUP_VALUES_PER_HOUR } from '../../src/storage/sql/rollup-values.js'
import { appendVerifications } from '../../src/storage/sql/verification-log-writer.js'
import { createVerificationQueryRepository, type VerificationQueryRepository } from '../../src/storage/sql/verification-query-repository.js'
import { databaseForSuite, databaseKinds } from '../helpers/storage.js'
import { insertVerifications, logEntryOf, type VerificationRow } from '../helpers/verification-rows.js'

const HOUR_MS = 3_600_000
const hour = Date.UTC(2025, 11, 1, 10)

/** A scored verification from this host with this page action, the index-th of the hour (12 s apart). */
function rowOf(siteId: string, index: number, hostname: string, pageAction: string): VerificationRow {
  return { siteId, createdAt: new Date(hour + index * 12_000), action: 'block', riskScore: 90, hostname, pageAction }
}

/** `popular` rows of the popular page (the site's own form), then `flood` of a made-up host and page action each. */
function rowsOf(siteId: string, first: number, popular: number, flood: number, prefix: string): VerificationRow[] {
  return Array.from({ length: popular + flood }, (_, index) =>
    index < popular ? rowOf(siteId, first + index, 'shop.example', 'login') : rowOf(siteId, first + index, `${prefix}${index}.shop.example`, `${prefix}${index}`),
  )
}

const kinds = [
  { kind: 'hostname', valueOf: (row: VerificationRow) => row.hostname ?? '' },
  { kind: 'page_action', valueOf: (row: VerificationRow) => row.pageAction ?? '' },
] as const

describe.each(databaseKinds)('the distinct hostnames and page actions counted per site and hour on $kind', ({ kind, available }) => {
  const subject = databaseForSuite(kind, available)
  let queries: VerificationQueryRepository

  beforeAll(() => {
    if (available) queries = createVerificationQueryRepository(subject.database)
  })

  /**
   * A flood of one hour: every verification with its own Origin subdomain and page action. The
   * log's writer counts the first batch (the popular page and 150 made-up ones) and the last, the
   * insert trigger (an instance of an earlier version) the one between.
   */
  async function flood(siteId: string): Promise<VerificationRow[]> {
    const written = rowsOf(siteId, 0, 20, 150, 'a')
    const inserted = rowsOf(siteId, 170, 10, 60, 'b')
    const late = rowsOf(siteId, 240, 5, 30, 'c')
    await appendVerifications(subject.database, written.map(logEntryOf))
    await insertVerifications(subject.database, inserted)
    await appendVerifications(subject.database, late.map(logEntryOf))
    return [...written, ...inserted, ...late]
  }

  /** The site's counts of one kind in the hour (the one that starts at `start`), by value. */
  async function countsOf(siteId: string, rollupKind: string, start = hour): Promise<Map<string, number>> {
    const rows = await subject.database.query<{ value: string; count: number }>(
      'SELECT value, count FROM verification_rollups WHERE site_id = $1 AND kind = $2 AND hour = $3',
      [siteId, rollupKind, new Date(start)],
    )
    return new Map(rows.map((row) => [row.value, row.count]))
  }

  /**
   * The counts agree with the log's rows: each value's at most its rows (some may be counted
   * under the reserved value), none at 0 or below, the reserved value the rest, the sum all of them.
   */
  async function expectConsistent(siteId: string, rows: VerificationRow[], start = hour, most = ROLLUP_VALUES_PER_HOUR): Promise<void> {
    for (const { kind: rollupKind, valueOf } of kinds) {
      const counts = await countsOf(siteId, rollupKind, start)
      expect(counts.size).toBeLessThanOrEqual(most + 1)
      const logged = new Map<string, number>()
      for (const row of rows) logged.set(valueOf(row), (logged.get(valueOf(row)) ?? 0) + 1)
      let named = 0
      for (const [value, count] of counts) {
        expect(count).toBeGreaterThan(0)
        if (value === OTHER_ROLLUP_VALUE) continue
        expect(count).toBeLessThanOrEqual(logged.get(value) ?? 0)
        named += count
      }
      expect(counts.get(OTHER_ROLLUP_VALUE) ?? 0).toBe(rows.length - named)
    }
  }

  it.skipIf(!available)('counts at most the bound of values per hour, the rest under the reserved value, and the totals stay right', async () => {
    const siteId = randomUUID()
    const rows = await flood(siteId)
    for (const { kind: rollupKind } of kinds) {
      const counts = await countsOf(siteId, rollupKind)
      // The popular value and 99 of the first batch's made-up ones; the 51 others of the first
      // batch, and every new one after, under the reserved value.
      expect(counts.size).toBe(ROLLUP_VALUES_PER_HOUR + 1)
      expect(counts.get(rollupKind === 'hostname' ? 'shop.example' : 'login')).toBe(35)
      expect(counts.get(OTHER_ROLLUP_VALUE)).toBe(51 + 60 + 30)
      expect([...counts.values()].reduce((sum, count) => sum + count, 0)).toBe(rows.length)
    }
    await expectConsistent(siteId, rows)

    // The stats of the whole hour rank the reserved value as any other: the remainder of the top values.
    const range = { from: new Date(hour), to: new Date(hour + HOUR_MS), interval: 'hour' as const }
    expect((await queries.topHostnames(siteId, range, 2))).toEqual([
      { label: OTHER_ROLLUP_VALUE, count: 141 },
      { label: 'shop.example', count: 35 },
    ])
    expect((await queries.topPageActions(siteId, range, 2))).toEqual([
      { label: OTHER_ROLLUP_VALUE, count: 141 },
      { label: 'login', count: 35 },
    ])
    // A part of an hour is read from the log, which keeps the real values.
    const part = { from: new Date(hour + 240 * 12_000), to: new Date(hour + 250 * 12_000), interval: 'hour' as const }
    expect(await queries.topPageActions(siteId, part, 10)).toEqual([{ label: 'login', count: 5 }, ...['c5', 'c6', 'c7', 'c8', 'c9'].map((label) => ({ label, count: 1 }))])
  })

  it.skipIf(!available)('lowers the reserved value for the rows counted under it when they are deleted, never a count below zero', async () => {
    const siteId = randomUUID()
    let rows = await flood(siteId)
    // Retention, in batches that end inside the hour: its last, partial hour is lowered value by value.
    const cutoff = new Date(hour + 200 * 12_000)
    while ((await queries.deleteOldest(siteId, 70, cutoff)) === 70);
    rows = rows.filter((row) => row.createdAt >= cutoff)
    await expectConsistent(siteId, rows)
    // Of the reserved value's 141, the first batch's 51 and the 20 made-up ones of the second deleted.
    expect((await countsOf(siteId, 'hostname')).get(OTHER_ROLLUP_VALUE)).toBe(70)
    // A visitor's erasure (counted by the delete trigger): the last batch's made-up hosts, all under the reserved value.
    await subject.database.query("DELETE FROM verifications WHERE site_id = $1 AND hostname LIKE 'c%'", [siteId])
    rows = rows.filter((row) => !(row.hostname ?? '').startsWith('c'))
    await expectConsistent(siteId, rows)
    expect((await countsOf(siteId, 'hostname')).get(OTHER_ROLLUP_VALUE)).toBe(40)
    // And the rest: nothing is left of the hour's counts.
    while ((await queries.deleteOldest(siteId, 70)) > 0);
    expect((await countsOf(siteId, 'hostname')).size).toBe(0)
    expect((await countsOf(siteId, 'page_action')).size).toBe(0)
  })

  it.skipIf(!available)("lowers a value's own count first, never below 0, when it was counted under the reserved value too", async () => {
    const siteId = randomUUID()
    // A full hour: 100 values, then 'late' under the reserved value.
    const full = Array.from({ length: ROLLUP_VALUES_PER_HOUR }, (_, index) => rowOf(siteId, index, `v${index}.shop.example`, `v${index}`))
    await appendVerifications(subject.database, full.map(logEntryOf))
    const late = rowOf(siteId, 100, 'late.shop.example', 'late')
    await appendVerifications(subject.database, [logEntryOf(late)])
    expect((await countsOf(siteId, 'page_action')).get(OTHER_ROLLUP_VALUE)).toBe(1)
    // An erasure empties a value, which makes room: 'late' comes again and gets a count of its own.
    await subject.database.query("DELETE FROM verifications WHERE site_id = $1 AND page_action = 'v0'", [siteId])
    await appendVerifications(subject.database, [logEntryOf(rowOf(siteId, 101, 'late.shop.example', 'late'))])
    expect((await countsOf(siteId, 'page_action')).get('late')).toBe(1)
    // Both of its rows erased: its own count goes (not to -1), and the reserved value's with it.
    await subject.database.query("DELETE FROM verifications WHERE site_id = $1 AND page_action = 'late'", [siteId])
    const counts = await countsOf(siteId, 'page_action')
    expect(counts.has('late')).toBe(false)
    expect(counts.has(OTHER_ROLLUP_VALUE)).toBe(false)
    expect(counts.size).toBe(ROLLUP_VALUES_PER_HOUR - 1)
    await expectConsistent(siteId, full.slice(1))
  })

  it.skipIf(!available)("counts the previous hour's most counted values as themselves, even after a flood filled the hour first", async () => {
    const siteId = randomUUID()
    const previous = hour - HOUR_MS
    // The hour before: the site's real forms, `login` most and `signup`.
    const before = [
      ...Array.from({ length: 40 }, (_, index) => rowOf(siteId, index - 300, 'shop.example', 'login')),
      ...Array.from({ length: 6 }, (_, index) => rowOf(siteId, index - 200, 'accounts.shop.example', 'signup')),
    ]
    await appendVerifications(subject.database, before.map(logEntryOf))
    // At the start of the hour, 100 made-up values fill its room.
    const flooded = Array.from({ length: ROLLUP_VALUES_PER_HOUR }, (_, index) => rowOf(siteId, 0, `f${index}.shop.example`, `f${index}`))
    await appendVerifications(subject.database, flooded.map(logEntryOf))
    // Then the site's real verifications: by the log's writer, and by the insert trigger (an earlier version's instance).
    const logins = Array.from({ length: 500 }, (_, index) => rowOf(siteId, 1 + (index % 250), 'shop.example', 'login'))
    const signups = Array.from({ length: 12 }, (_, index) => rowOf(siteId, 2 + index, 'accounts.shop.example', 'signup'))
    await appendVerifications(subject.database, logins.slice(0, 300).map(logEntryOf))
    await insertVerifications(subject.database, [...logins.slice(300), ...signups.slice(0, 5)])
    await appendVerifications(subject.database, signups.slice(5).map(logEntryOf))
    // A value new in the hour, after the flood: under the reserved value.
    const checkout = [rowOf(siteId, 260, 'pay.shop.example', 'checkout'), rowOf(siteId, 261, 'pay.shop.example', 'checkout')]
    await appendVerifications(subject.database, checkout.map(logEntryOf))

    const rows = [...flooded, ...logins, ...signups, ...checkout]
    for (const [rollupKind, login, signup, checkoutValue] of [
      ['hostname', 'shop.example', 'accounts.shop.example', 'pay.shop.example'],
      ['page_action', 'login', 'signup', 'checkout'],
    ] as const) {
      const counts = await countsOf(siteId, rollupKind)
      expect(counts.get(login)).toBe(500)
      expect(counts.get(signup)).toBe(12)
      expect(counts.has(checkoutValue)).toBe(false)
      expect(counts.get(OTHER_ROLLUP_VALUE)).toBe(2)
      expect(counts.size).toBe(ROLLUP_VALUES_PER_HOUR + 3)
      expect([...counts.values()].reduce((sum, count) => sum + count, 0)).toBe(rows.length)
    }
    await expectConsistent(siteId, rows, hour, 2 * ROLLUP_VALUES_PER_HOUR)
    await expectConsistent(siteId, before, previous)
    const range = { from: new Date(hour), to: new Date(hour + HOUR_MS), interval: 'hour' as const }
    expect(await queries.topPageActions(siteId, range, 2)).toEqual([
      { label: 'login', count: 500 },
      { label: 'signup', count: 12 },
    ])
  })

  it.skipIf(!available)("holds at most the bound of the previous hour's values and the bound of new ones in an hour", async () => {
    const siteId = randomUUID()
    const previous = hour - HOUR_MS
    // The hour before: 100 values counted twice each, then 20 once, under the reserved value.
    const before = [
      ...Array.from({ length: 2 * ROLLUP_VALUES_PER_HOUR }, (_, index) => rowOf(siteId, index - 300, `p${index % 100}.shop.example`, `p${index % 100}`)),
      ...Array.from({ length: 20 }, (_, index) => rowOf(siteId, index - 80, `q${index}.shop.example`, `q${index}`)),
    ]
    await appendVerifications(subject.database, before.map(logEntryOf))
    expect((await countsOf(siteId, 'page_action', previous)).get(OTHER_ROLLUP_VALUE)).toBe(20)
    // The hour: 100 made-up values first, then all of the hour before's and one more.
    const flooded = Array.from({ length: ROLLUP_VALUES_PER_HOUR }, (_, index) => rowOf(siteId, index, `f${index}.shop.example`, `f${index}`))
    await appendVerifications(subject.database, flooded.map(logEntryOf))
    const again = [...before.slice(ROLLUP_VALUES_PER_HOUR), rowOf(siteId, 200, 'late.shop.example', 'late')].map((row, index) => ({ ...row, createdAt: new Date(hour + (100 + index) * 12_000) }))
    await appendVerifications(subject.database, again.map(logEntryOf))
    for (const { kind: rollupKind } of kinds) {
      const counts = await countsOf(siteId, rollupKind)
      expect(counts.size).toBe(2 * ROLLUP_VALUES_PER_HOUR + 1)
      expect(counts.get(OTHER_ROLLUP_VALUE)).toBe(21)
    }
    await expectConsistent(siteId, [...flooded, ...again], hour, 2 * ROLLUP_VALUES_PER_HOUR)
  })
})
