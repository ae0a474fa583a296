import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserHeaders, createTestSite, humanSubmission, type TestSite } from '../helpers/core-flow.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

/** The service sits behind a proxy on 127.0.0.1 (app.inject's default peer), which TRUST_PROXY names. */
const PROXY = '127.0.0.1'
/** Home connections (Deutsche Telekom), one per visitor: no network label of their own. */
const homeAddress = (visitor: number) => `80.187.${Math.floor(visitor / 200)}.${(visitor % 200) + 1}`

/**
 * fingerprint_many_ips: one device fingerprint from many addresses. Identical phones share a
 * fingerprint, so a busy site's limit grows with its traffic (5% of its scored verifications in
 * the last hour), while a quiet site's stays at 20 addresses an hour.
 */
describe.each(deployments)('the spread of one fingerprint over many addresses on $name', ({ available, options }) => {
  let service: TestApp

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, env: { TRUST_PROXY: PROXY }, config: { rateLimitPerMinute: 0 } })
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  /** A visitor's challenge and verification from its own address, with the shared test fingerprint; the labels logged. */
  async function visit(site: TestSite, visitor: number): Promise<string[]> {
    const headers = { ...browserHeaders(site.siteKey), 'x-forwarded-for': homeAddress(visitor) }
    const issued = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', remoteAddress: PROXY, headers })
    expect(issued.statusCode).toBe(200)
    const challenge = issued.json<Challenge>()
    const verified = await service.app.inject({ method: 'POST', url: '/api/v1/verify', remoteAddress: PROXY, headers, payload: humanSubmission(challenge) })
    expect(verified.statusCode).toBe(200)
    await service.app.verificationLog.flush()
    const [row] = await service.app.database.query<{ anomalies: string[] }>('SELECT anomalies FROM verifications WHERE challenge_id = $1', [challenge.challengeId])
    return row?.anomalies ?? []
  }

  it.skipIf(!available)('flags the fingerprint on a quiet site from its 20th address within the hour', async () => {
    const site = await createTestSite(service.app)
    for (let visitor = 1; visitor < 20; visitor++) expect(await visit(site, visitor)).toEqual([])
    expect(await visit(site, 20)).toEqual(['fingerprint_many_ips'])
    // The address flagged pays for it at its next challenge; the first one is flagged when seen again.
    expect(await visit(site, 1)).toEqual(['fingerprint_many_ips'])
  })

  it.skipIf(!available)('lets a busy site see one popular device from 5% of its traffic before it flags it', async () => {
    const site = await createTestSite(service.app)
    // 600 scored verifications of other visitors in the last hour, and rejected ones, which do not count.
    const now = Date.now()
    await insertVerifications(service.app.database, [
      ...Array.from({ length: 600 }, (_, index) => ({ siteId: site.site.id, createdAt: new Date(now - 1_000 - index), action: 'allow' as const })),
      ...Array.from({ length: 2_000 }, (_, index) => ({ siteId: site.site.id, createdAt: new Date(now - 1_000 - index), action: 'rejected' as const })),
    ])
    // The limit is then 5% of 600 and of the visits below: about 31 to 32 addresses.
    for (let visitor = 1; visitor <= 30; visitor++) expect(await visit(site, visitor)).toEqual([])
    await visit(site, 31)
    await visit(site, 32)
    expect(await visit(site, 33)).toEqual(['fingerprint_many_ips'])
  })
})
