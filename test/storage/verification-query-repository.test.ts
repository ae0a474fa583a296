import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StatsRange } from '../../src/domain/analytics/stats-range.js'
import { createVerificationQueryRepository, type VerificationQueryRepository } from '../../src/storage/sql/verification-query-repository.js'
import { databaseKinds, openTestDatabase, type TestDatabase } from '../helpers/storage.js'
import { insertVerifications } from '../helpers/verification-rows.js'

const HOUR_MS = 3_600_000

describe.each(databaseKinds)('verification queries on $kind', ({ kind, available }) => {
  let subject: TestDatabase
  let queries: VerificationQueryRepository

  beforeAll(async () => {
    if (!available) return
    subject = await openTestDatabase(kind)
    queries = createVerificationQueryRepository(subject.database)
  })
  afterAll(async () => {
    if (!available) return
    await subject.database.close()
    await subject.dispose()
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

  it.skipIf(!available)("deletes one site's rows only", async () => {
    const doomed = randomUUID()
    const kept = randomUUID()
    await insertVerifications(subject.database, [
      { siteId: doomed, createdAt: new Date(), action: 'allow' },
      { siteId: kept, createdAt: new Date(), action: 'allow' },
    ])
    await queries.deleteBySite(doomed)
    expect(await queries.listPage(doomed, { limit: 10 })).toEqual([])
    expect(await queries.listPage(kept, { limit: 10 })).toHaveLength(1)
  })
})
