import { randomUUID } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import { createVerificationQueryRepository } from '../../src/storage/sql/verification-query-repository.js'
import { hasPostgres } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

const DAY_MS = 86_400_000

/** Rows of the log per site, oldest first, as epoch milliseconds. */
async function loggedTimes(service: TestApp, siteId: string): Promise<number[]> {
  const rows = await service.app.database.query<{ created_at: Date }>('SELECT created_at FROM verifications WHERE site_id = $1 ORDER BY created_at', [siteId])
  return rows.map((row) => row.created_at.getTime())
}

async function purgedCounter(service: TestApp): Promise<number> {
  const metrics = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  const line = metrics.split('\n').find((candidate) => candidate.startsWith('tollgate_verification_log_purged_rows_total '))
  return Number(line?.split(' ')[1])
}

describe.each([
  { database: 'pglite' as const, available: true },
  { database: 'postgres' as const, available: hasPostgres },
])('verification log retention on $database', ({ database, available }) => {
  it.skipIf(!available)('deletes every site\'s rows older than LOG_RETENTION_DAYS, in batches, keeps the rest and counts what went', async () => {
    const service = await buildTestApp({ database, env: { LOG_RETENTION_DAYS: '30' } })
    try {
      const now = Date.now()
      const site = randomUUID()
      // A site deleted while a batch of its rows was in flight leaves rows behind: they age out too.
      const deletedSite = randomUUID()
      const kept = [now - 29 * DAY_MS, now - DAY_MS, now]
      await insertVerifications(service.app.database, [
        // More than one DELETE's worth (5,000 rows per statement).
        ...Array.from({ length: 12_000 }, (_, index) => ({ siteId: site, createdAt: new Date(now - 40 * DAY_MS - index), action: 'allow' as const })),
        ...kept.map((time) => ({ siteId: site, createdAt: new Date(time), action: 'block' as const })),
        ...[31, 365].map((days) => ({ siteId: deletedSite, createdAt: new Date(now - days * DAY_MS), action: 'rejected' as const })),
        { siteId: deletedSite, createdAt: new Date(now - 2 * DAY_MS), action: 'allow' },
      ])
      const query = vi.spyOn(service.app.database, 'query')

      expect(await service.app.logRetention.sweep(new Date(now))).toBe(12_002)

      expect(await loggedTimes(service, site)).toEqual(kept)
      expect(await loggedTimes(service, deletedSite)).toEqual([now - 2 * DAY_MS])
      const deletes = query.mock.calls.filter(([sql]) => sql.includes('DELETE FROM verifications'))
      expect(deletes.length).toBeGreaterThanOrEqual(4)
      expect(await purgedCounter(service)).toBe(12_002)
      // Nothing is left to delete: a second sweep deletes nothing and the counter stays.
      expect(await service.app.logRetention.sweep(new Date(now))).toBe(0)
      expect(await purgedCounter(service)).toBe(12_002)
    } finally {
      await service.close()
    }
  })

  it.skipIf(!available)('counts the rows a failing sweep deleted before it failed, and the next sweep finishes the job', async () => {
    const service = await buildTestApp({ database, env: { LOG_RETENTION_DAYS: '30' } })
    try {
      const now = Date.now()
      const siteId = randomUUID()
      await insertVerifications(
        service.app.database,
        Array.from({ length: 7_000 }, (_, index) => ({ siteId, createdAt: new Date(now - 31 * DAY_MS - index), action: 'allow' as const })),
      )
      const query = service.app.database.query.bind(service.app.database)
      let deletes = 0
      const failSecondDelete = vi.spyOn(service.app.database, 'query').mockImplementation(async (sql, params) => {
        if (sql.includes('DELETE FROM verifications') && ++deletes === 2) throw new Error('connection lost')
        return query(sql, params)
      })
      await expect(service.app.logRetention.sweep(new Date(now))).rejects.toThrow('connection lost')
      expect(await purgedCounter(service)).toBe(5_000)
      failSecondDelete.mockRestore()

      expect(await service.app.logRetention.sweep(new Date(now))).toBe(2_000)
      expect(await purgedCounter(service)).toBe(7_000)
      expect(await loggedTimes(service, siteId)).toEqual([])
    } finally {
      await service.close()
    }
  })

  it.skipIf(!available)('sweeps on its own, every interval', async () => {
    const service = await buildTestApp({ database, env: { LOG_RETENTION_DAYS: '1' }, logRetentionIntervalMs: 50 })
    try {
      const siteId = randomUUID()
      await insertVerifications(service.app.database, [
        { siteId, createdAt: new Date(Date.now() - 2 * DAY_MS), action: 'allow' },
        { siteId, createdAt: new Date(), action: 'allow' },
      ])
      await vi.waitFor(async () => expect(await loggedTimes(service, siteId)).toHaveLength(1), { timeout: 3_000 })
    } finally {
      await service.close()
    }
  })

  it.skipIf(!available)('keeps every row with LOG_RETENTION_DAYS=0', async () => {
    const service = await buildTestApp({ database, env: { LOG_RETENTION_DAYS: '0' }, logRetentionIntervalMs: 20 })
    try {
      const siteId = randomUUID()
      const times = [Date.now() - 3650 * DAY_MS, Date.now()]
      await insertVerifications(service.app.database, times.map((time) => ({ siteId, createdAt: new Date(time), action: 'allow' as const })))
      expect(await service.app.logRetention.sweep()).toBe(0)
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(await loggedTimes(service, siteId)).toEqual(times)
      expect(await createVerificationQueryRepository(service.app.database).listLoggedSiteIds()).toContain(siteId)
    } finally {
      await service.close()
    }
  })
})
