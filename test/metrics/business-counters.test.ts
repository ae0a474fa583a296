import { Registry } from 'prom-client'
import { describe, expect, it, vi } from 'vitest'
import { createBusinessCounters } from '../../src/metrics/business-counters.js'
import { browserHeaders, createTestSite, fetchChallenge } from '../helpers/core-flow.js'
import { hasPromtool, runPromtool } from '../helpers/promtool.js'
import { hasRedis } from '../helpers/services.js'
import { databaseKinds, openTestDatabase } from '../helpers/storage.js'
import { buildTestApp } from '../helpers/test-app.js'

async function readCounter(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get()
  const sample = metric?.values.find((value) => Object.entries(labels).every(([key, label]) => value.labels[key] === label))
  return sample?.value ?? 0
}

describe.each(databaseKinds)('business counters on $kind', ({ kind, available }) => {
  it.skipIf(!available)('persist across restarts: flushed increments are loaded by the next instance', async () => {
    const { database, dispose } = await openTestDatabase(kind)
    try {
      const first = createBusinessCounters(new Registry(), database)
      await first.load()
      first.increment('verifications', { action: 'allow' }, 3)
      first.increment('verifications', { action: 'block' })
      first.increment('challengesIssued', {}, 7)
      await first.flush()
      first.increment('challengesIssued', {}, 1)
      await first.flush()

      const registry = new Registry()
      const second = createBusinessCounters(registry, database)
      await second.load()
      expect(await readCounter(registry, 'tollgate_verifications_total', { action: 'allow' })).toBe(3)
      expect(await readCounter(registry, 'tollgate_verifications_total', { action: 'block' })).toBe(1)
      expect(await readCounter(registry, 'tollgate_challenges_issued_total')).toBe(8)
    } finally {
      await database.close()
      await dispose()
    }
  })

  it.skipIf(!available)('two instances add up instead of overwriting each other', async () => {
    const { database, dispose } = await openTestDatabase(kind)
    try {
      const first = createBusinessCounters(new Registry(), database)
      const second = createBusinessCounters(new Registry(), database)
      first.increment('siteverify', { result: 'success' }, 2)
      second.increment('siteverify', { result: 'success' }, 5)
      await Promise.all([first.flush(), second.flush()])
      const rows = await database.query<{ value: number }>("SELECT value FROM metric_counters WHERE name = 'tollgate_siteverify_total'")
      expect(rows).toEqual([{ value: 7 }])
    } finally {
      await database.close()
      await dispose()
    }
  })
})

describe.each(databaseKinds)('business counters of several instances on $kind', ({ kind, available }) => {
  it.skipIf(!available)('every instance shows the fleet\'s totals once it has flushed, and no counter ever goes down', async () => {
    const { database, dispose } = await openTestDatabase(kind)
    try {
      const firstRegistry = new Registry()
      const first = createBusinessCounters(firstRegistry, database)
      const secondRegistry = new Registry()
      const second = createBusinessCounters(secondRegistry, database)
      await Promise.all([first.load(), second.load()])
      const read = (registry: Registry) => readCounter(registry, 'tollgate_siteverify_total', { result: 'success' })

      first.increment('siteverify', { result: 'success' }, 2)
      second.increment('siteverify', { result: 'success' }, 5)
      await first.flush()
      await second.flush()
      // The second read the first's increments back with its own; the first sees the second's at its next flush.
      expect(await read(secondRegistry)).toBe(7)
      expect(await read(firstRegistry)).toBe(2)
      first.increment('siteverify', { result: 'success' }, 1)
      await first.flush()
      expect(await read(firstRegistry)).toBe(8)
      // An increment not stored yet counts once, before and after a read back.
      second.increment('siteverify', { result: 'success' }, 1)
      expect(await read(secondRegistry)).toBe(8)
      await first.flush()
      expect(await read(firstRegistry)).toBe(8)

      // Totals removed by hand (a counter reset that did not happen on any instance) are not shown as one.
      await database.execute('DELETE FROM metric_counters')
      await first.flush()
      expect(await read(firstRegistry)).toBe(8)
    } finally {
      await database.close()
      await dispose()
    }
  })
})

describe('business counters at shutdown', () => {
  it('count as stored once their write is in, however long reading the totals back would take (it is skipped)', async () => {
    const service = await buildTestApp()
    const query = service.app.database.query.bind(service.app.database)
    // Reading the totals back (for the display only) would take longer than the 2 s a write may stay silent.
    vi.spyOn(service.app.database, 'query').mockImplementation(async (sql, params) => {
      if (sql.startsWith('SELECT name, labels, value FROM metric_counters')) await new Promise((resolve) => setTimeout(resolve, 2_500))
      return query(sql, params)
    })
    service.app.counters.increment('siteverify', { result: 'success' })
    const stored = vi.fn()
    const close = service.app.database.close.bind(service.app.database)
    service.app.database.close = async () => {
      stored(await query<{ value: number }>(`SELECT value FROM metric_counters WHERE name = 'tollgate_siteverify_total' AND labels = 'result=success'`))
      await close()
    }
    await service.close()
    expect(service.app.unwrittenAtShutdown).toEqual([])
    expect(stored).toHaveBeenCalledWith([{ value: 1 }])
  })
})

describe('business counters when the database fails', () => {
  it('count a flush whose write went in as done, even when reading the totals back fails', async () => {
    const { database, dispose } = await openTestDatabase('pglite')
    try {
      // Forced: every read of the totals fails, as a connection dropped after the write would.
      const failingReads = {
        ...database,
        query: <Row extends object>(sql: string, parameters?: unknown[]) =>
          sql.startsWith('SELECT') ? Promise.reject(new Error('connection lost')) : database.query<Row>(sql, parameters),
      } as typeof database
      const counters = createBusinessCounters(new Registry(), failingReads)
      counters.increment('siteverify', { result: 'success' }, 3)
      await counters.flush()
      expect(counters.countUnwritten()).toBe(0)
      expect(await database.query<{ value: number }>('SELECT value FROM metric_counters')).toEqual([{ value: 3 }])
    } finally {
      await database.close()
      await dispose()
    }
  })

  it('keep their increments for the next flush', async () => {
    const { database, dispose } = await openTestDatabase('pglite')
    const counters = createBusinessCounters(new Registry(), database)
    counters.increment('webhookDeliveries', { outcome: 'delivered' }, 4)
    await database.execute('ALTER TABLE metric_counters RENAME TO metric_counters_away')
    await expect(counters.flush()).rejects.toThrow()
    await database.execute('ALTER TABLE metric_counters_away RENAME TO metric_counters')
    await counters.flush()
    const rows = await database.query<{ value: number }>('SELECT value FROM metric_counters')
    expect(rows).toEqual([{ value: 4 }])
    await database.close()
    await dispose()
  })
})

describe.skipIf(!hasPromtool)('/metrics output', () => {
  it('passes promtool check metrics', async () => {
    const service = await buildTestApp()
    try {
      service.app.counters.increment('verifications', { action: 'allow' })
      service.app.counters.increment('siteverify', { result: 'invalid-input-response' })
      await service.app.inject({ method: 'GET', url: '/health' })
      const response = await service.app.inject({ method: 'GET', url: '/metrics' })
      const result = runPromtool(['check', 'metrics'], { input: response.body })
      expect(result.output).toBe('')
      expect(result.status).toBe(0)
    } finally {
      await service.close()
    }
  })
})

describe('the in-process store on /metrics', () => {
  /** tollgate_memory_store_entries as a scrape reads it, or undefined when the exposition lacks it. */
  const storeEntries = async (service: { app: Awaited<ReturnType<typeof buildTestApp>>['app'] }): Promise<number | undefined> => {
    const exposition = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    const match = /^tollgate_memory_store_entries (\d+)$/m.exec(exposition)
    return match === null ? undefined : Number(match[1])
  }

  it('counts the entries an issued challenge adds, so the embedded store\'s growth can be watched', async () => {
    const service = await buildTestApp()
    try {
      const site = await createTestSite(service.app)
      const before = await storeEntries(service)
      expect(before).toBeGreaterThanOrEqual(0)
      await fetchChallenge(service.app, browserHeaders(site.siteKey))
      await fetchChallenge(service.app, browserHeaders(site.siteKey))
      expect(await storeEntries(service)).toBeGreaterThanOrEqual((before ?? 0) + 2)
    } finally {
      await service.close()
    }
  })

  it.skipIf(!hasRedis)('is absent with Redis, whose own DBSIZE tells it', async () => {
    const service = await buildTestApp({ keyValue: 'redis' })
    try {
      expect(await storeEntries(service)).toBeUndefined()
    } finally {
      await service.close()
    }
  })
})
