import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { StatsRange } from '../../src/domain/analytics/stats-range.js'
import { migrate, readMigrations } from '../../src/storage/migrate.js'
import type { SqlExecutor } from '../../src/storage/ports.js'
import { createSiteRepository } from '../../src/storage/sql/site-repository.js'
import { appendVerifications } from '../../src/storage/sql/verification-log-writer.js'
import { createVerificationQueryRepository, statsParameters, type VerificationQueryRepository } from '../../src/storage/sql/verification-query-repository.js'
import { databaseForSuite, databaseKinds, openTestDatabase } from '../helpers/storage.js'
import { insertVerifications, logEntryOf, type VerificationRow } from '../helpers/verification-rows.js'

const HOUR_MS = 3_600_000
const actions = ['allow', 'challenge', 'block', 'rejected'] as const
const labels = ['datacenter_ip', 'vpn_detected', 'no_interaction', 'headless_browser']
const countries = ['US', 'DE', 'FR', null]
const hostnames = ['shop.example', 'www.shop.example', null]
const pageActions = ['login', 'signup', 'checkout', null]

/**
 * Rows spread over [start, start + spanMs): every action, zero to two labels, a country or none,
 * a hostname or none, and a risk score from 0 to 100 (none for rejected rows, as in service).
 */
function sampleRows(siteId: string, start: number, spanMs: number, count: number): VerificationRow[] {
  return Array.from({ length: count }, (_, index) => {
    const action = actions[index % actions.length] ?? 'allow'
    return {
      siteId,
      createdAt: new Date(start + Math.floor(((index * 7919) % count) * (spanMs / count)) + (index % 1000)),
      action,
      riskScore: action === 'rejected' ? null : (index * 13) % 101,
      anomalies: labels.filter((_, label) => (index + label) % 3 === 0).slice(0, index % 3),
      countryCode: countries[index % countries.length] ?? null,
      hostname: hostnames[index % hostnames.length] ?? null,
      pageAction: pageActions[(index >> 1) % pageActions.length] ?? null,
    }
  })
}

/** The bucket of ten a score is counted in: '0' for 0-9, ... '90' for 90-100. */
function scoreBucketOf(score: number): string {
  return String(score === 100 ? 90 : Math.floor(score / 10) * 10)
}

/** Counts by score bucket of the scored rows, as `bucket -> count`. */
function scoreCounts(rows: VerificationRow[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const row of rows) {
    if (row.riskScore == null) continue
    counts.set(scoreBucketOf(row.riskScore), (counts.get(scoreBucketOf(row.riskScore)) ?? 0) + 1)
  }
  return counts
}

/** Counts by label, most first, then alphabetically, as the stats rank them (top 10). */
function ranked(values: string[]): { label: string; count: number }[] {
  const counts = new Map<string, number>()
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
  return [...counts]
    .map(([label, count]) => ({ label, count }))
    .sort((a, b) => b.count - a.count || (a.label < b.label ? -1 : 1))
    .slice(0, 10)
}

/** A row as logged before migration 021, which has no page action. */
function withoutPageAction({ pageAction: _pageAction, ...row }: VerificationRow): VerificationRow {
  return row
}

/** What the hourly rollups must hold for these rows. */
function expectedRollups(rows: VerificationRow[]): Map<string, number> {
  const counts = new Map<string, number>()
  const add = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1)
  for (const row of rows) {
    const prefix = `${row.siteId} ${Math.floor(row.createdAt.getTime() / HOUR_MS) * HOUR_MS}`
    add(`${prefix} action ${row.action}`)
    for (const label of row.anomalies ?? []) add(`${prefix} anomaly ${label}`)
    if (row.countryCode != null) add(`${prefix} country ${row.countryCode}`)
    if (row.riskScore != null) add(`${prefix} score ${scoreBucketOf(row.riskScore)}`)
    // A rejected submission's hostname is not counted: it costs no proof of work to make up.
    if (row.hostname != null && row.riskScore != null) add(`${prefix} hostname ${row.hostname}`)
    if (row.pageAction != null && row.riskScore != null) add(`${prefix} page_action ${row.pageAction}`)
  }
  return counts
}

/** Which parts of a range the log itself is read for: [from, first whole hour) and [end of the whole hours, to). */
describe('the split of a stats range between the hourly counts and the log', () => {
  const now = Date.parse('2026-11-24T10:40:00.000Z')
  const hour = (iso: string) => new Date(`2026-11-24T${iso}:00.000Z`)
  const partsReadFromLog = (range: StatsRange) => {
    const [, from, wholeFrom, wholeTo, to] = statsParameters('site', range, now)
    return [[from, wholeFrom], [wholeTo, to]].filter(([start, end]) => start!.getTime() < end!.getTime()).map(([start, end]) => `${start!.toISOString()}..${end!.toISOString()}`)
  }

  it('reads nothing from the log for whole hours, nor for the current hour of a range that ends now or later', () => {
    expect(partsReadFromLog({ from: hour('00:00'), to: hour('10:00'), interval: 'hour' })).toEqual([])
    // The default "last 24 hours": before, the current hour so far (a busy site's tens of thousands of rows) was read row by row.
    expect(partsReadFromLog({ from: hour('00:00'), to: new Date(now), interval: 'hour', endsNow: true })).toEqual([])
    expect(partsReadFromLog({ from: hour('00:00'), to: new Date(now + 5 * 60_000), interval: 'hour' })).toEqual([])
  })

  it('reads the log for a part of an hour cut off at from, or by a to in the past', () => {
    expect(partsReadFromLog({ from: new Date(Date.parse('2026-11-24T00:20:00.000Z')), to: hour('10:00'), interval: 'hour' })).toEqual([
      '2026-11-24T00:20:00.000Z..2026-11-24T01:00:00.000Z',
    ])
    expect(partsReadFromLog({ from: hour('00:00'), to: new Date(Date.parse('2026-11-24T09:15:00.000Z')), interval: 'hour' })).toEqual([
      '2026-11-24T09:00:00.000Z..2026-11-24T09:15:00.000Z',
    ])
  })
})

describe.each(databaseKinds)('verification queries on $kind', ({ kind, available }) => {
  const subject = databaseForSuite(kind, available)
  let queries: VerificationQueryRepository

  beforeAll(() => {
    if (available) queries = createVerificationQueryRepository(subject.database)
  })

  it.skipIf(!available)('counts per UTC bucket and action within [from, to)', async () => {
    const siteId = randomUUID()
    const start = Date.UTC(2025, 0, 1)
    await insertVerifications(subject.database, [
      { siteId, createdAt: new Date(start - 1), action: 'allow' },
      { siteId, createdAt: new Date(start), action: 'allow' },
      { siteId, createdAt: new Date(start + HOUR_MS - 1), action: 'allow' },
      { siteId, createdAt: new Date(start + HOUR_MS), action: 'block' },
      { siteId, createdAt: new Date(start + 2 * HOUR_MS), action: 'block' },
      { siteId: randomUUID(), createdAt: new Date(start), action: 'allow' },
    ])
    const range: StatsRange = { from: new Date(start), to: new Date(start + 2 * HOUR_MS), interval: 'hour' }
    const counts = await queries.countByBucket(siteId, range)
    expect(counts.sort((a, b) => a.bucketMs - b.bucketMs)).toEqual([
      { bucketMs: start, action: 'allow', count: 2 },
      { bucketMs: start + HOUR_MS, action: 'block', count: 1 },
    ])
    const daily = await queries.countByBucket(siteId, { from: new Date(start - HOUR_MS), to: new Date(start + 3 * HOUR_MS), interval: 'day' })
    expect(daily.sort((a, b) => a.bucketMs - b.bucketMs)).toEqual([
      { bucketMs: start - 24 * HOUR_MS, action: 'allow', count: 1 },
      { bucketMs: start, action: 'allow', count: 2 },
      { bucketMs: start, action: 'block', count: 2 },
    ])
  })

  it.skipIf(!available)("counts a site's scored verifications in the current hour and the one before, not the rejected ones", async () => {
    const siteId = randomUUID()
    const hour = Date.UTC(2025, 0, 1, 10)
    await insertVerifications(subject.database, [
      { siteId, createdAt: new Date(hour - 2 * HOUR_MS), action: 'allow' },
      { siteId, createdAt: new Date(hour - HOUR_MS), action: 'allow' },
      { siteId, createdAt: new Date(hour - 1), action: 'block' },
      { siteId, createdAt: new Date(hour - 1), action: 'rejected' },
      { siteId, createdAt: new Date(hour), action: 'challenge' },
      { siteId, createdAt: new Date(hour + 5 * 60_000), action: 'allow' },
      { siteId, createdAt: new Date(hour + 5 * 60_000), action: 'rejected' },
      { siteId, createdAt: new Date(hour + HOUR_MS), action: 'allow' },
      { siteId: randomUUID(), createdAt: new Date(hour), action: 'allow' },
    ])
    expect(await queries.scoredInRecentHours(siteId, hour + 30 * 60_000)).toEqual({ current: 2, previous: 2 })
    expect(await queries.scoredInRecentHours(siteId, hour)).toEqual({ current: 2, previous: 2 })
    expect(await queries.scoredInRecentHours(siteId, hour - 1)).toEqual({ current: 2, previous: 1 })
    expect(await queries.scoredInRecentHours(randomUUID(), hour)).toEqual({ current: 0, previous: 0 })
  })

  it.skipIf(!available)('ranks anomalies and countries by count, then alphabetically, up to the limit', async () => {
    const siteId = randomUUID()
    const at = new Date(Date.UTC(2025, 1, 1))
    await insertVerifications(subject.database, [
      { siteId, createdAt: at, action: 'block', anomalies: ['vpn_detected', 'datacenter_ip'], countryCode: 'US' },
      { siteId, createdAt: at, action: 'block', anomalies: ['datacenter_ip'], countryCode: 'US' },
      { siteId, createdAt: at, action: 'allow', anomalies: ['automation'], countryCode: 'DE' },
      { siteId, createdAt: at, action: 'allow', countryCode: null },
    ])
    const range: StatsRange = { from: at, to: new Date(at.getTime() + 1), interval: 'hour' }
    expect(await queries.topAnomalies(siteId, range, 2)).toEqual([
      { label: 'datacenter_ip', count: 2 },
      { label: 'automation', count: 1 },
    ])
    expect(await queries.topCountries(siteId, range, 10)).toEqual([
      { label: 'US', count: 2 },
      { label: 'DE', count: 1 },
    ])
  })

  it.skipIf(!available)('pages newest first by (created_at, id) to the microsecond, filtered by action', async () => {
    const siteId = randomUUID()
    // Rows a few microseconds apart: a cursor rounded to the millisecond would skip or repeat them.
    await subject.database.query(
      `INSERT INTO verifications (id, site_id, created_at, action)
       SELECT gen_random_uuid(), $1, timestamptz '2025-03-01 12:00:00.123000+00' + n * interval '1 microsecond',
              CASE WHEN n % 2 = 0 THEN 'allow' ELSE 'block' END
         FROM generate_series(0, 9) AS n`,
      [siteId],
    )
    const all = await queries.listPage(siteId, { limit: 100 })
    expect(all).toHaveLength(10)
    const times = all.map((entry) => entry.createdAtMicros)
    expect(times).toEqual([...times].sort((a, b) => b - a))
    expect(new Set(times).size).toBe(10)

    const paged: string[] = []
    let after: { createdAtMicros: number; id: string } | undefined
    for (let page = 0; page < 5; page++) {
      const entries = await queries.listPage(siteId, { limit: 3, after })
      paged.push(...entries.map((entry) => entry.id))
      const last = entries.at(-1)
      if (last === undefined) break
      after = { createdAtMicros: last.createdAtMicros, id: last.id }
    }
    expect(paged).toEqual(all.map((entry) => entry.id))

    const blocked = await queries.listPage(siteId, { limit: 100, action: 'block' })
    expect(blocked.map((entry) => entry.id)).toEqual(all.filter((entry) => entry.action === 'block').map((entry) => entry.id))
  })

  it.skipIf(!available)('counts exactly the rows within [from, to) when the range starts and ends inside an hour', async () => {
    const siteId = randomUUID()
    const start = Date.UTC(2025, 6, 1, 10)
    // The scores at the buckets' edges, in both part-hours: read from the log, they must fall in the buckets the rollups have them in.
    const edges = [0, 9, 10, 89, 90, 99, 100].flatMap((riskScore): VerificationRow[] =>
      [start + 31 * 60_000, start + 5 * HOUR_MS + 9 * 60_000].map((time) => ({ siteId, createdAt: new Date(time), action: 'block', riskScore, hostname: 'edge.example' })),
    )
    const rows = [...sampleRows(siteId, start - 2 * HOUR_MS, 9 * HOUR_MS, 400), ...edges]
    await insertVerifications(subject.database, rows)
    const range: StatsRange = { from: new Date(start + 30 * 60_000), to: new Date(start + 5 * HOUR_MS + 10 * 60_000), interval: 'hour' }
    const inRange = rows.filter((row) => row.createdAt >= range.from && row.createdAt < range.to)

    const byBucket = new Map<string, number>()
    for (const row of inRange) {
      const key = `${Math.floor(row.createdAt.getTime() / HOUR_MS) * HOUR_MS} ${row.action}`
      byBucket.set(key, (byBucket.get(key) ?? 0) + 1)
    }
    const counts = await queries.countByBucket(siteId, range)
    expect(new Map(counts.map((count) => [`${count.bucketMs} ${count.action}`, count.count]))).toEqual(byBucket)
    const daily = await queries.countByBucket(siteId, { ...range, interval: 'day' })
    expect(daily.reduce((sum, count) => sum + count.count, 0)).toBe(inRange.length)

    expect(await queries.topAnomalies(siteId, range, 10)).toEqual(ranked(inRange.flatMap((row) => row.anomalies ?? [])))
    expect(await queries.topCountries(siteId, range, 10)).toEqual(ranked(inRange.flatMap((row) => (row.countryCode == null ? [] : [row.countryCode]))))
    expect(await queries.topHostnames(siteId, range, 10)).toEqual(ranked(inRange.flatMap((row) => (row.hostname == null || row.riskScore == null ? [] : [row.hostname]))))
    expect(await queries.topPageActions(siteId, range, 10)).toEqual(ranked(inRange.flatMap((row) => (row.pageAction == null || row.riskScore == null ? [] : [row.pageAction]))))
    const scores = await queries.countByScoreBucket(siteId, range)
    expect(new Map(scores.map(({ label, count }) => [label, count]))).toEqual(scoreCounts(inRange))
    expect(scoreCounts(inRange).size).toBe(10)
  })

  it.skipIf(!available)('keeps the hourly rollups equal to the log through inserts, retention deletes and site deletion', async () => {
    const sites = [randomUUID(), randomUUID()]
    const start = Date.UTC(2025, 7, 1)
    const rows = sites.flatMap((siteId) => sampleRows(siteId, start, 72 * HOUR_MS, 1_500))
    await insertVerifications(subject.database, rows)
    const cutoff = new Date(start + 30 * HOUR_MS + 17 * 60_000)
    await queries.deleteOldest(sites[0] ?? '', 700, cutoff)
    const remaining = rows.filter((row) => row.siteId !== sites[0] || row.createdAt >= cutoff)
    const deletedOld = rows.filter((row) => row.siteId === sites[0] && row.createdAt < cutoff)
    // deleteOldest removes the oldest first: the 700 oldest rows of site 0 are gone.
    const oldestFirst = [...deletedOld].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
    const kept = [...remaining, ...oldestFirst.slice(700)]
    expect(await rollupsOf(sites)).toEqual(expectedRollups(kept))

    // A site's deletion: its counts go at once, then its rows in batches, which leave no counts behind.
    await queries.deleteRollupsOf(sites[1] ?? '')
    const keptOfSite0 = expectedRollups(kept.filter((row) => row.siteId === sites[0]))
    expect(await rollupsOf(sites)).toEqual(keptOfSite0)
    while ((await queries.deleteOldest(sites[1] ?? '', 400)) > 0);
    expect(await rollupsOf(sites)).toEqual(keptOfSite0)
  })

  it.skipIf(!available)("keeps the rollups equal to the log when the log's writer counts its rows and the trigger counts everyone else's (migration 020)", async () => {
    const siteId = randomUUID()
    const start = Date.UTC(2025, 9, 1)
    const written = sampleRows(siteId, start, 48 * HOUR_MS, 1_200)
    // The writer's batches, and rows inserted by other means (an instance of an earlier version
    // during a rolling upgrade) in between, in the same hours.
    await appendVerifications(subject.database, written.slice(0, 600).map(logEntryOf))
    const inserted = sampleRows(siteId, start, 48 * HOUR_MS, 300)
    await insertVerifications(subject.database, inserted)
    await appendVerifications(subject.database, written.slice(600).map(logEntryOf))
    const all = [...written, ...inserted]
    expect(await rollupsOf([siteId])).toEqual(expectedRollups(all))
    // And the counts the writer added go again with its rows.
    const cutoff = new Date(start + 20 * HOUR_MS + 13 * 60_000)
    while ((await queries.deleteOldest(siteId, 250, cutoff)) > 0);
    expect(await rollupsOf([siteId])).toEqual(expectedRollups(all.filter((row) => row.createdAt >= cutoff)))
  })

  it.skipIf(!available)('keeps the rollups equal to those recomputed from the remaining log after a sweep that counts its own deletes (migration 041)', async () => {
    const sites = [randomUUID(), randomUUID(), randomUUID()]
    const start = Date.UTC(2025, 10, 1)
    // Rows of the writer (which counts them) and of other inserts (the trigger does), in the same hours.
    for (const siteId of sites) {
      await appendVerifications(subject.database, sampleRows(siteId, start, 30 * HOUR_MS, 600).map(logEntryOf))
      await insertVerifications(subject.database, sampleRows(siteId, start, 30 * HOUR_MS, 250))
    }
    // Batches of 97 end inside hours, and a batch's last hour is often cut short; the cutoff is within an hour too.
    const cutoff = new Date(start + 17 * HOUR_MS + 23 * 60_000)
    for (const siteId of sites.slice(0, 2)) while ((await queries.deleteOldest(siteId, 97, cutoff)) === 97);
    // In one transaction, a batch counted by its own statement, then a DELETE the trigger counts
    // (the visitor erasure's, an older instance's): the setting that tells the trigger lasts for one statement only.
    await subject.database.transaction(async (transaction) => {
      expect(await createVerificationQueryRepository(transaction).deleteOldest(sites[2] ?? '', 120, cutoff)).toBe(120)
      const [setting] = await transaction.query<{ value: string | null }>("SELECT current_setting('tollgate.rollup_deletes_counted', true) AS value")
      expect(setting?.value).toBe('off')
      await transaction.query('DELETE FROM verifications WHERE site_id = $1 AND created_at >= $2 AND created_at < $3', [
        sites[2],
        new Date(start + 20 * HOUR_MS),
        new Date(start + 22 * HOUR_MS + 5 * 60_000),
      ])
    })
    // A deleted site's rows: all of them, no cutoff.
    while ((await queries.deleteOldest(sites[1] ?? '', 97)) === 97);
    const remaining = await subject.database.query<VerificationRow & { riskScore: number | null; pageAction: string | null }>(
      `SELECT site_id AS "siteId", created_at AS "createdAt", action, risk_score AS "riskScore", anomalies, country_code AS "countryCode",
              hostname, page_action AS "pageAction"
         FROM verifications WHERE site_id = ANY($1::uuid[])`,
      [sites],
    )
    const keptOfSite0 = remaining.filter((row) => row.siteId === sites[0]).length
    expect(keptOfSite0).toBeGreaterThan(0)
    expect(keptOfSite0).toBeLessThan(850)
    expect(remaining.some((row) => row.siteId === sites[0] && row.createdAt < cutoff)).toBe(false)
    expect(remaining.filter((row) => row.siteId === sites[1])).toEqual([])
    expect(await rollupsOf(sites)).toEqual(expectedRollups(remaining))
  })

  it.skipIf(!available)('counts the rows logged before the rollups existed when their migrations run', async () => {
    const older = await openTestDatabase(kind, { migrated: false })
    try {
      const migrations = await readMigrations()
      // Those of the rollups, and 041 and 042, which replace their trigger functions (its deletes' counting, the bound on values).
      const rollupMigrations = migrations.filter((migration) => migration.sql.includes('FUNCTION verification_rollups_'))
      expect(rollupMigrations.map((migration) => migration.version)).toEqual([7, 17, 19, 20, 21, 41, 42])
      await migrate(older.database, migrations.filter((migration) => !rollupMigrations.includes(migration)))
      const siteId = randomUUID()
      const rows = sampleRows(siteId, Date.UTC(2025, 8, 1), 10 * HOUR_MS, 300).map(withoutPageAction)
      await insertVerifications(older.database, rows)
      expect(await migrate(older.database)).toEqual([7, 17, 19, 20, 21, 41, 42])
      expect(await rollupsOf([siteId], older.database)).toEqual(expectedRollups(rows))
    } finally {
      await older.database.close()
      await older.dispose()
    }
  })

  it.skipIf(!available)('counts the scores and hostnames of the rows logged before migration 017, and the other kinds not twice', async () => {
    const older = await openTestDatabase(kind, { migrated: false })
    try {
      const migrations = await readMigrations()
      await migrate(older.database, migrations.filter((migration) => migration.version < 17))
      const siteId = randomUUID()
      const rows = sampleRows(siteId, Date.UTC(2025, 8, 2), 10 * HOUR_MS, 300).map(withoutPageAction)
      await insertVerifications(older.database, rows)
      expect(await migrate(older.database)).toEqual(migrations.filter((migration) => migration.version >= 17).map((migration) => migration.version))
      expect(await rollupsOf([siteId], older.database)).toEqual(expectedRollups(rows))
      // The triggers now count the new kinds of the rows that follow, and take them away again.
      const later = sampleRows(siteId, Date.UTC(2025, 8, 2, 5), 10 * HOUR_MS, 200)
      await insertVerifications(older.database, later)
      const cutoff = new Date(Date.UTC(2025, 8, 2, 7, 17))
      expect(await createVerificationQueryRepository(older.database).deleteOldest(siteId, 10_000, cutoff)).toBeGreaterThan(0)
      const kept = [...rows, ...later].filter((row) => row.createdAt >= cutoff)
      expect(await rollupsOf([siteId], older.database)).toEqual(expectedRollups(kept))
    } finally {
      await older.database.close()
      await older.dispose()
    }
  })

  /** The rollup rows of these sites, as `site hour kind value` -> count. */
  async function rollupsOf(siteIds: string[], database: SqlExecutor = subject.database): Promise<Map<string, number>> {
    const rows = await database.query<{ site_id: string; hour: Date; kind: string; value: string; count: number }>(
      'SELECT site_id, hour, kind, value, count FROM verification_rollups WHERE site_id = ANY($1::uuid[])',
      [siteIds],
    )
    return new Map(rows.map((row) => [`${row.site_id} ${row.hour.getTime()} ${row.kind} ${row.value}`, row.count]))
  }

  it.skipIf(!available)('lists every site that has rows in the log, once each, and whether it was deleted', async () => {
    const { site: live } = await createSiteRepository(subject.database).create({ accountId: null, name: 'Live' })
    const gone: string[] = [randomUUID(), randomUUID()]
    await insertVerifications(
      subject.database,
      [live.id, ...gone].flatMap((siteId) => Array.from({ length: 3 }, (_, index) => ({ siteId, createdAt: new Date(Date.UTC(2025, 4, 1) + index), action: 'allow' as const }))),
    )
    const listed = (await queries.listLoggedSites()).filter(({ siteId }) => siteId === live.id || gone.includes(siteId))
    const bySiteId = (a: { siteId: string }, b: { siteId: string }) => (a.siteId < b.siteId ? -1 : 1)
    expect(listed.map(({ siteId, deleted }) => ({ siteId, deleted })).sort(bySiteId)).toEqual([{ siteId: live.id, deleted: false }, ...gone.map((siteId) => ({ siteId, deleted: true }))].sort(bySiteId))

    expect(listed.find(({ siteId }) => siteId === live.id)?.oldestAt).toEqual(new Date(Date.UTC(2025, 4, 1)))

    expect(await queries.deleteOldest(gone[0] ?? '', 10)).toBe(3)
    expect((await queries.listLoggedSites()).map(({ siteId }) => siteId)).not.toContain(gone[0])
  })

  it.skipIf(!available)("deletes a site's rows created before the cutoff, oldest first, at most the limit per call", async () => {
    const siteId = randomUUID()
    const otherSite = randomUUID()
    const cutoff = Date.UTC(2025, 5, 1)
    const old = [5, 4, 3, 2, 1].map((hours) => new Date(cutoff - hours * HOUR_MS))
    const recent = [new Date(cutoff), new Date(cutoff + HOUR_MS)]
    await insertVerifications(subject.database, [
      ...[...old, ...recent].map((createdAt) => ({ siteId, createdAt, action: 'allow' as const })),
      ...old.map((createdAt) => ({ siteId: otherSite, createdAt, action: 'block' as const })),
    ])
    const timesOf = async (site: string) => (await queries.listPage(site, { limit: 100 })).map((entry) => entry.createdAt.getTime()).sort((a, b) => a - b)

    expect(await queries.deleteOldest(siteId, 2, new Date(cutoff))).toBe(2)
    expect(await timesOf(siteId)).toEqual([...old.slice(2), ...recent].map((date) => date.getTime()))
    expect(await queries.deleteOldest(siteId, 10, new Date(cutoff))).toBe(3)
    expect(await queries.deleteOldest(siteId, 10, new Date(cutoff))).toBe(0)
    // A row created exactly at the cutoff is kept, and so is every row of another site.
    expect(await timesOf(siteId)).toEqual(recent.map((date) => date.getTime()))
    expect(await timesOf(otherSite)).toHaveLength(old.length)
  })

  it.skipIf(!available)("deletes all of a site's rows without a cutoff, and no other site's", async () => {
    const doomed = randomUUID()
    const kept = randomUUID()
    await insertVerifications(subject.database, [
      { siteId: doomed, createdAt: new Date(), action: 'allow' },
      { siteId: kept, createdAt: new Date(), action: 'allow' },
    ])
    expect(await queries.deleteOldest(doomed, 10)).toBe(1)
    expect(await queries.listPage(doomed, { limit: 10 })).toEqual([])
    expect(await queries.listPage(kept, { limit: 10 })).toHaveLength(1)
  })
})

describe.runIf(databaseKinds.find((entry) => entry.kind === 'postgres')?.available)('deleting a site\'s counts while instances write its log (PostgreSQL)', () => {
  it("never deadlocks with the insert trigger or the log's writer: the counts are locked in the order the trigger locks them", { timeout: 60_000 }, async () => {
    const subject = await openTestDatabase('postgres')
    try {
      const queries = createVerificationQueryRepository(subject.database)
      const failures: string[] = []
      const start = Date.now() - 3 * HOUR_MS
      // Each round: two writers (two instances, one of them of a version before migration 020,
      // counted by the trigger) insert batches for a site, its deletion runs meanwhile.
      for (let round = 0; round < 60; round++) {
        const siteId = randomUUID()
        let stop = false
        const writer = async (offset: number, write: (rows: VerificationRow[]) => Promise<unknown>) => {
          for (let batch = 0; !stop; batch++) {
            await write(sampleRows(siteId, start, 3 * HOUR_MS, 40 + ((batch + offset) % 7)))
              .catch((error: { code?: string }) => failures.push(`writer ${error.code}`))
          }
        }
        const writers = [
          writer(0, (rows) => insertVerifications(subject.database, rows)),
          writer(3, (rows) => appendVerifications(subject.database, rows.map(logEntryOf))),
        ]
        await new Promise((resolve) => setTimeout(resolve, 20))
        await subject.database.transaction((transaction) => createVerificationQueryRepository(transaction).deleteRollupsOf(siteId))
          .catch((error: { code?: string }) => failures.push(`deletion ${error.code}`))
        stop = true
        await Promise.all(writers)
        while ((await queries.deleteOldest(siteId, 1_000)) > 0);
      }
      expect(failures).toEqual([])
    } finally {
      await subject.database.close()
      await subject.dispose()
    }
  })
})
