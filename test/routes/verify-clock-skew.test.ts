import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserHeaders, createTestSite, fetchChallenge, humanSubmission, submitSolution, type TestSite } from '../helpers/core-flow.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

/**
 * Instances are interchangeable (DESIGN section 2), and their clocks never agree exactly: the
 * instance that checks a solution may run ahead of or behind the one that issued the challenge.
 * Neither an early expiry nor an "impossible" solve time may fall on the visitor for that.
 */
describe.each(deployments)('verify across instances whose clocks disagree, on $name', ({ available, options }) => {
  let service: TestApp
  let site: TestSite
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, config: { rateLimitPerMinute: 0 } })
    site = await createTestSite(service.app, { settings: { challengeLifetimeSeconds: 30 } })
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  /** A challenge issued by an instance whose clock is `skewMs` off this one's, solved by a person in 300 ms. */
  async function verifyAcrossSkew(skewMs: number, remoteAddress: string) {
    const headers = browserHeaders(site.siteKey)
    const realNow = Date.now.bind(Date)
    const issuingClock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + skewMs)
    const issued = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers, remoteAddress })
    issuingClock.mockRestore()
    const challenge = issued.json<Challenge>()
    await new Promise((resolve) => setTimeout(resolve, 300))
    return service.app.inject({ method: 'POST', url: '/api/v1/verify', headers, remoteAddress, payload: { ...humanSubmission(challenge), solveTimeMs: 250 } })
  }

  it.skipIf(!available)('allows a person whose challenge came from an instance 2 s ahead (no solve_time_impossible)', async () => {
    const response = await verifyAcrossSkew(2_000, '198.51.100.21')
    expect(response.statusCode).toBe(200)
    // A person in a browser scores 0; solve_time_impossible alone would be 50.
    expect(response.json()).toMatchObject({ success: true, action: 'allow', riskScore: 0 })
  })

  it.skipIf(!available)('allows a person whose challenge came from an instance 40 s behind (no early expiry of a 30 s challenge)', async () => {
    const response = await verifyAcrossSkew(-40_000, '198.51.100.22')
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ success: true, action: 'allow', riskScore: 0 })
  })

  it.skipIf(!available)('still finds a claimed solve time longer than the time the store saw impossible', async () => {
    const headers = browserHeaders(site.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, headers, { ...humanSubmission(challenge), solveTimeMs: 5_000 })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ success: false, action: 'challenge', riskScore: 50 })
  })
})
