import { randomUUID } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import { createVerificationQueryRepository } from '../../src/storage/sql/verification-query-repository.js'
import { createTestSite } from '../helpers/core-flow.js'
import { hasPostgres } from '../helpers/services.js'
import { buildTestApp, type TestApp, type TestAppOptions } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

const DAY_MS = 86_400_000

/** A test app on this database for the length of `run`, closed however `run` ends. */
async function withService(options: TestAppOptions, run: (service: TestApp) => Promise<void>): Promise<void> {
  const service = await buildTestApp(options)
  try {
    await run(service)
  } finally {
    await service.close()
  }
}

/** A site that exists (the sweep deletes every row of a site that does not). */
async function liveSite(service: TestApp): Promise<string> {
  return (await createTestSite(service.app)).site.id
}

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
  it.skipIf(!available)('also deletes expired log-in sessions, with the address and browser they kept; live ones stay', async () => {
    await withService({ database }, async (service) => {
      const account = await service.app.accounts.create(`${randomUUID()}@example.com`, 'hash')
      const owner = { id: account!.id, passwordHash: 'hash' }
      const origin = { userAgent: 'Firefox/135.0', clientIp: '198.51.100.9' }
      // The live one first: opening a session drops the account's expired ones.
      const live = await service.app.sessions.create(owner, `live-${owner.id}`, new Date(Date.now() + DAY_MS), origin)
      const expired = await service.app.sessions.create(owner, `expired-${owner.id}`, new Date(Date.now() - 1_000), origin)
      expect((await service.app.database.query('SELECT id FROM sessions WHERE account_id = $1', [owner.id])).length).toBe(2)
      await service.app.logRetention.sweep()
      const left = await service.app.database.query<{ id: string }>('SELECT id FROM sessions WHERE account_id = $1', [owner.id])
      expect(left.map((row) => row.id)).toEqual([live])
      expect(expired).toEqual(expect.any(String))
    })
  })

  it.skipIf(!available)('deletes Siteverify\'s hourly counts older than LOG_RETENTION_DAYS with the log, and keeps them all without a retention', async () => {
    const HOUR_MS = 3_600_000
    const now = Date.now()
    const hourOf = (time: number) => Math.floor(time / HOUR_MS) * HOUR_MS
    const countedHours = async (service: TestApp, siteId: string) => {
      const rows = await service.app.database.query<{ hour: Date }>('SELECT hour FROM siteverify_counts WHERE site_id = $1 ORDER BY hour', [siteId])
      return rows.map((row) => row.hour.getTime())
    }
    const hours = [now - 31 * DAY_MS, now - 29 * DAY_MS, now].map(hourOf)
    for (const retentionDays of ['30', '0']) {
      await withService({ database, env: { LOG_RETENTION_DAYS: retentionDays } }, async (service) => {
        const site = await liveSite(service)
        for (const hour of hours) service.app.siteverifyCounts.count(site, 'success', hour + 1_000)
        await service.app.siteverifyCounts.flush()
        await service.app.logRetention.sweep(new Date(now))
        expect(await countedHours(service, site), `LOG_RETENTION_DAYS=${retentionDays}`).toEqual(retentionDays === '0' ? hours : hours.slice(1))
      })
    }
  })

  it.skipIf(!available)('deletes every site\'s rows older than LOG_RETENTION_DAYS and every row of a deleted site, in batches, keeps the rest and counts what went', async () => {
    await withService({ database, env: { LOG_RETENTION_DAYS: '30' } }, async (service) => {
      const now = Date.now()
      const site = await liveSite(service)
      // A site that no longer exists (deleted, or its last batch landed after its deletion): all its rows go.
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

      expect(await service.app.logRetention.sweep(new Date(now))).toBe(12_003)

      expect(await loggedTimes(service, site)).toEqual(kept)
      expect(await loggedTimes(service, deletedSite)).toEqual([])
      const deletes = query.mock.calls.filter(([sql]) => sql.includes('DELETE FROM verifications'))
      expect(deletes.length).toBeGreaterThanOrEqual(4)
      expect(await purgedCounter(service)).toBe(12_003)
      // Nothing is left to delete: a second sweep deletes nothing and the counter stays.
      expect(await service.app.logRetention.sweep(new Date(now))).toBe(0)
      expect(await purgedCounter(service)).toBe(12_003)
    })
  })

  // PGlite runs no autovacuum; PostgreSQL's own reuses the space in its own time.
  it.skipIf(!available || database !== 'pglite')('reuses the space of the rows it deleted: the log does not grow from one retention period to the next', async () => {
    await withService({ database, env: { LOG_RETENTION_DAYS: '30' } }, async (service) => {
      const now = Date.now()
      const site = await liveSite(service)
      const tableSize = async () =>
        (await service.app.database.query<{ bytes: number }>("SELECT pg_total_relation_size('verifications')::int8 AS bytes"))[0]!.bytes
      const expireRows = async () => {
        await insertVerifications(
          service.app.database,
          Array.from({ length: 10_000 }, (_, index) => ({ siteId: site, createdAt: new Date(now - 40 * DAY_MS - index), action: 'allow' as const })),
        )
        expect(await service.app.logRetention.sweep(new Date(now))).toBe(10_000)
      }
      // The index pages a VACUUM frees are reused after the next one: the size settles in two periods.
      for (let period = 0; period < 2; period += 1) await expireRows()
      const settled = await tableSize()
      for (let period = 0; period < 4; period += 1) await expireRows()
      // Without a VACUUM each period added its 10,000 rows' pages again (three times the size here).
      expect(await tableSize()).toBeLessThan(settled * 1.1)
    })
  })

  it.skipIf(!available)('counts the rows a failing sweep deleted before it failed, and the next sweep finishes the job', async () => {
    await withService({ database, env: { LOG_RETENTION_DAYS: '30' } }, async (service) => {
      const now = Date.now()
      const siteId = await liveSite(service)
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
    })
  })

  it.skipIf(!available)('sweeps again for a caller that comes while a sweep is under way, once for all such callers', async () => {
    await withService({ database }, async (service) => {
      // The first sweep's list of sites is held back until the test lets it go.
      const query = service.app.database.query.bind(service.app.database)
      let lists = 0
      let listed!: () => void
      const firstListed = new Promise<void>((resolve) => (listed = resolve))
      let release!: () => void
      const released = new Promise<void>((resolve) => (release = resolve))
      vi.spyOn(service.app.database, 'query').mockImplementation(async (sql, params) => {
        const result = await query(sql, params)
        if (sql.includes('WITH RECURSIVE logged') && ++lists === 1) {
          listed()
          await released
        }
        return result
      })
      const first = service.app.logRetention.sweep()
      await firstListed
      // Rows of a site deleted after the first sweep listed the sites: only a sweep that starts later sees them.
      const deletedSite = randomUUID()
      await insertVerifications(service.app.database, [{ siteId: deletedSite, createdAt: new Date(), action: 'allow' }])
      const second = service.app.logRetention.sweep()
      const third = service.app.logRetention.sweep()
      release()
      expect(await first).toBe(0)
      expect(await second).toBe(1)
      expect(await third).toBe(1)
      expect(lists).toBe(2)
      expect(await loggedTimes(service, deletedSite)).toEqual([])
    })
  })

  it.skipIf(!available)('deletes, on its own, webhook deliveries older than 30 days of a site that no longer sends (even with LOG_RETENTION_DAYS=0); newer ones stay', async () => {
    await withService({ database, env: { LOG_RETENTION_DAYS: '0' }, logRetentionIntervalMs: 50 }, async (service) => {
      const siteId = await liveSite(service)
      const delivery = (ageDays: number) => ({
        id: randomUUID(),
        siteId,
        event: 'verification.blocked' as const,
        url: 'https://hooks.example.com/',
        isTest: false,
        verificationId: null,
        redeliveryOf: null,
        outcome: 'delivered' as const,
        statusCode: 200,
        latencyMs: 12,
        error: null,
        createdAt: new Date(Date.now() - ageDays * DAY_MS),
      })
      const [old, recent] = [delivery(31), delivery(29)]
      for (const row of [old, recent]) await service.app.webhooks.deliveries.record(row)
      const storedIds = async () => (await service.app.database.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE site_id = $1', [siteId])).map((row) => row.id)
      await vi.waitFor(async () => expect(await storedIds()).toEqual([recent.id]), { timeout: 3_000 })
    })
  })

  it.skipIf(!available)('forgets the replaced webhook secrets whose overlap ended, and keeps those still signing', async () => {
    await withService({ database }, async (service) => {
      const [ended, signing] = [await liveSite(service), await liveSite(service)]
      const overlap = "UPDATE sites SET previous_webhook_secret_ciphertext = 'sealed', previous_webhook_secret_expires_at = now() + $2::interval WHERE id = $1"
      await service.app.database.query(overlap, [ended, '-1 second'])
      await service.app.database.query(overlap, [signing, '1 hour'])
      const stored = async (siteId: string) =>
        (await service.app.database.query<{ previous_webhook_secret_ciphertext: string | null; revision: string }>(
          'SELECT previous_webhook_secret_ciphertext, revision::text FROM sites WHERE id = $1',
          [siteId],
        ))[0]
      const revision = (await stored(ended))?.revision
      await service.app.logRetention.sweep()
      expect(await stored(ended)).toEqual({ previous_webhook_secret_ciphertext: null, revision })
      expect((await stored(signing))?.previous_webhook_secret_ciphertext).toBe('sealed')
      expect((await service.app.sites.findById(signing))?.previousWebhookSecret).not.toBeNull()
    })
  })

  it.skipIf(!available)('sweeps on its own, every interval', async () => {
    await withService({ database, env: { LOG_RETENTION_DAYS: '1' }, logRetentionIntervalMs: 50 }, async (service) => {
      const siteId = await liveSite(service)
      await insertVerifications(service.app.database, [
        { siteId, createdAt: new Date(Date.now() - 2 * DAY_MS), action: 'allow' },
        { siteId, createdAt: new Date(), action: 'allow' },
      ])
      await vi.waitFor(async () => expect(await loggedTimes(service, siteId)).toHaveLength(1), { timeout: 3_000 })
    })
  })

  it.skipIf(!available)('keeps every row of a live site with LOG_RETENTION_DAYS=0, and still deletes those of a deleted site', async () => {
    await withService({ database, env: { LOG_RETENTION_DAYS: '0' }, logRetentionIntervalMs: 20 }, async (service) => {
      const siteId = await liveSite(service)
      const deletedSite = randomUUID()
      const times = [Date.now() - 3650 * DAY_MS, Date.now()]
      await insertVerifications(service.app.database, [siteId, deletedSite].flatMap((site) => times.map((time) => ({ siteId: site, createdAt: new Date(time), action: 'allow' as const }))))
      // The timer's sweeps (every 20 ms) take the deleted site's rows, and nothing else.
      await vi.waitFor(async () => expect(await loggedTimes(service, deletedSite)).toEqual([]), { timeout: 3_000 })
      expect(await service.app.logRetention.sweep()).toBe(0)
      expect(await loggedTimes(service, siteId)).toEqual(times)
      expect((await createVerificationQueryRepository(service.app.database).listLoggedSites()).map((logged) => logged.siteId)).toContain(siteId)
    })
  })
})
