import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSiteRepository } from '../../src/storage/sql/site-repository.js'
import { createSiteverifyCountRepository, type SiteverifyCountRepository } from '../../src/storage/sql/siteverify-count-repository.js'
import { databaseKinds, openTestDatabase, type TestDatabase } from '../helpers/storage.js'

const HOUR_MS = 3_600_000

describe.each(databaseKinds.filter(({ available }) => available))('Siteverify count repository on $kind', ({ kind }) => {
  let testDatabase: TestDatabase
  let counts: SiteverifyCountRepository
  let createSite: () => Promise<string>
  const hour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS
  beforeAll(async () => {
    testDatabase = await openTestDatabase(kind)
    counts = createSiteverifyCountRepository(testDatabase.database)
    const sites = createSiteRepository(testDatabase.database)
    createSite = async () => (await sites.create({ accountId: null, name: 'Siteverify counts' })).site.id
  })
  afterAll(async () => {
    await testDatabase.database.close()
    await testDatabase.dispose()
  })

  it('adds counts to those stored per site, hour and outcome, and reads a range by the hours it overlaps, most first', async () => {
    const siteId = await createSite()
    const otherSiteId = await createSite()
    await counts.add([
      { siteId, hourMs: hour, outcome: 'success', count: 3 },
      { siteId, hourMs: hour, outcome: 'timeout-or-duplicate', count: 1 },
      { siteId, hourMs: hour - 2 * HOUR_MS, outcome: 'success', count: 2 },
      { siteId: otherSiteId, hourMs: hour, outcome: 'success', count: 50 },
    ])
    // A second instance's flush of the same keys adds to them.
    await counts.add([
      { siteId, hourMs: hour, outcome: 'success', count: 4 },
      { siteId, hourMs: hour, outcome: 'invalid-input-secret', count: 1 },
    ])

    expect(await counts.countsOf(siteId, new Date(hour - 2 * HOUR_MS), new Date(hour + HOUR_MS))).toEqual([
      { outcome: 'success', count: 9 },
      { outcome: 'invalid-input-secret', count: 1 },
      { outcome: 'timeout-or-duplicate', count: 1 },
    ])
    // A range that starts within an hour counts that hour whole; one that ends at an hour's start leaves it out.
    expect(await counts.countsOf(siteId, new Date(hour - HOUR_MS - 1), new Date(hour))).toEqual([{ outcome: 'success', count: 2 }])
    expect(await counts.countsOf(siteId, new Date(hour - HOUR_MS), new Date(hour))).toEqual([])
    expect(await counts.countsOf(siteId, new Date(hour + 1), new Date(hour + 2))).toEqual([
      { outcome: 'success', count: 7 },
      { outcome: 'invalid-input-secret', count: 1 },
      { outcome: 'timeout-or-duplicate', count: 1 },
    ])
  })

  it('drops the counts of a site deleted before they were written, and deletes a site\'s counts with it', async () => {
    const sites = createSiteRepository(testDatabase.database)
    const kept = await createSite()
    const gone = await createSite()
    await counts.add([{ siteId: gone, hourMs: hour, outcome: 'success', count: 1 }])
    await sites.delete(gone)
    await counts.add([
      { siteId: gone, hourMs: hour, outcome: 'success', count: 5 },
      { siteId: kept, hourMs: hour, outcome: 'success', count: 2 },
    ])
    expect(await counts.countsOf(kept, new Date(hour), new Date(hour + HOUR_MS))).toEqual([{ outcome: 'success', count: 2 }])
    const [row] = await testDatabase.database.query<{ count: number }>('SELECT count(*)::int8 AS count FROM siteverify_counts WHERE site_id = $1', [gone])
    expect(row?.count).toBe(0)
  })

  it('deletes the hours that ended before the cutoff, and keeps the hour the cutoff falls in', async () => {
    const siteId = await createSite()
    const old = hour - 40 * 24 * HOUR_MS
    await counts.add([
      { siteId, hourMs: old, outcome: 'success', count: 1 },
      { siteId, hourMs: old + HOUR_MS, outcome: 'success', count: 1 },
      { siteId, hourMs: hour, outcome: 'success', count: 1 },
    ])
    expect(await counts.deleteBefore(new Date(old + HOUR_MS + 1))).toBeGreaterThanOrEqual(1)
    expect(await counts.countsOf(siteId, new Date(old - HOUR_MS), new Date(hour + HOUR_MS))).toEqual([{ outcome: 'success', count: 2 }])
  })
})
