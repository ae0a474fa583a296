import { afterEach, describe, expect, it, vi } from 'vitest'
import { createTestSite } from '../helpers/core-flow.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

/** A site's traffic as the fingerprint limit reads it (src/plugins/site-traffic.ts), on the embedded database. */
describe('site traffic', () => {
  let service: TestApp | undefined
  afterEach(async () => {
    vi.restoreAllMocks()
    await service?.close()
    service = undefined
  })

  /** Spies on the database's queries of the rollups. */
  function rollupReads(app: TestApp['app']) {
    const query = vi.spyOn(app.database, 'query')
    return () => query.mock.calls.filter(([sql]) => sql.includes('verification_rollups')).length
  }

  it("reads a site's scored verifications once a minute at most, and answers from that reading meanwhile", async () => {
    service = await buildTestApp()
    const { site } = await createTestSite(service.app)
    await insertVerifications(service.app.database, Array.from({ length: 30 }, () => ({ siteId: site.id, createdAt: new Date(), action: 'block' as const })))
    const reads = rollupReads(service.app)
    expect(await service.app.siteTraffic.scoredInLastHour(site.id)).toBe(30)
    await insertVerifications(service.app.database, [{ siteId: site.id, createdAt: new Date(), action: 'allow' }])
    expect(await service.app.siteTraffic.scoredInLastHour(site.id)).toBe(30)
    expect(reads()).toBe(1)
    // A minute later the reading is used once more while the next one is made.
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 61_000)
    expect(await service.app.siteTraffic.scoredInLastHour(site.id)).toBe(30)
    await vi.waitFor(async () => expect(await service?.app.siteTraffic.scoredInLastHour(site.id)).toBe(31))
    expect(reads()).toBe(2)
  })

  it('answers 0 (the fixed limit) when the database fails or is slow, and logs the failure once', async () => {
    const lines: string[] = []
    service = await buildTestApp({ logStream: { write: (line) => lines.push(line) } })
    const { site } = await createTestSite(service.app)
    const query = vi.spyOn(service.app.database, 'query').mockRejectedValue(new Error('connection refused'))
    expect(await service.app.siteTraffic.scoredInLastHour(site.id)).toBe(0)
    expect(await service.app.siteTraffic.scoredInLastHour(site.id)).toBe(0)
    expect(lines.filter((line) => line.includes("could not read a site's traffic"))).toHaveLength(1)
    query.mockImplementation(() => new Promise(() => {}))
    const started = performance.now()
    expect(await service.app.siteTraffic.scoredInLastHour(site.id)).toBe(0)
    expect(performance.now() - started).toBeLessThan(2_000)
    query.mockRestore()
  })
})
