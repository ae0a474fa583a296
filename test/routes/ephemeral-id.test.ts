import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { testSecrets } from '../../src/domain/siteverify/test-secrets.js'
import { browserFingerprint, browserHeaders, createTestSite, fetchChallenge, humanSubmission, submitSolution, type TestSite } from '../helpers/core-flow.js'
import { startWithinOneEphemeralIdWeek } from '../helpers/ephemeral-id-week.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

/** The service sits behind a proxy on 127.0.0.1 (app.inject's default peer), which TRUST_PROXY names. */
const PROXY = '127.0.0.1'

interface SiteverifyAnswer {
  success: boolean
  metadata: { ephemeral_id: string | null }
}

/** Siteverify's metadata.ephemeral_id: the visitor's device on the site, as Turnstile's. */
describe("Siteverify's ephemeral id of the visitor's device", () => {
  let service: TestApp
  let site: TestSite
  let otherSite: TestSite

  beforeAll(async () => {
    service = await buildTestApp({ env: { TRUST_PROXY: PROXY }, config: { rateLimitPerMinute: 0 } })
    site = await createTestSite(service.app)
    otherSite = await createTestSite(service.app)
  })
  afterAll(() => service.close())
  // One device's verifications get one id only within a week.
  beforeEach(startWithinOneEphemeralIdWeek)

  /** A visit from `address` with `fingerprint`, its token redeemed by the site's backend: the answer. */
  async function redeemVisit(target: TestSite, address: string, fingerprint: object): Promise<SiteverifyAnswer> {
    const headers = { ...browserHeaders(target.siteKey), 'x-forwarded-for': address }
    const challenge = (await service.app.inject({ method: 'POST', url: '/api/v1/challenge', remoteAddress: PROXY, headers })).json<Challenge>()
    const verified = await service.app.inject({
      method: 'POST',
      url: '/api/v1/verify',
      remoteAddress: PROXY,
      headers,
      payload: { ...humanSubmission(challenge), fingerprint },
    })
    const { token } = verified.json<{ token?: string }>()
    expect(token, verified.body).toBeDefined()
    const answer = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload: { secret: target.secretKey, response: token } })
    expect(answer.statusCode).toBe(200)
    return answer.json<SiteverifyAnswer>()
  }

  it('is the same for one device from two addresses, and differs for another device and on another site', async () => {
    const first = await redeemVisit(site, '80.187.1.10', browserFingerprint)
    expect(first).toMatchObject({ success: true, metadata: { ephemeral_id: expect.stringMatching(/^[0-9a-f]{24}$/) } })
    const id = first.metadata.ephemeral_id
    // The same device on another connection, its window another size (not part of the device).
    expect((await redeemVisit(site, '91.64.22.7', { ...browserFingerprint, outerWidth: 1000, outerHeight: 700 })).metadata.ephemeral_id).toBe(id)
    const otherDevice = await redeemVisit(site, '80.187.1.10', { ...browserFingerprint, canvas: '0d9e8f7a6b5c4d3e2f10', hardwareConcurrency: 4 })
    expect(otherDevice.metadata.ephemeral_id).toMatch(/^[0-9a-f]{24}$/)
    expect(otherDevice.metadata.ephemeral_id).not.toBe(id)
    const elsewhere = await redeemVisit(otherSite, '80.187.1.10', browserFingerprint)
    expect(elsewhere.metadata.ephemeral_id).toMatch(/^[0-9a-f]{24}$/)
    expect(elsewhere.metadata.ephemeral_id).not.toBe(id)
  })

  it("is null when the submission described no device (no canvas), for a test site key's token, and on a failed redemption", async () => {
    const { canvas: _canvas, ...withoutCanvas } = browserFingerprint
    expect(await redeemVisit(site, '80.187.1.11', withoutCanvas)).toMatchObject({ success: true, metadata: { ephemeral_id: null } })
    const testKey = { siteKey: '1x00000000000000000000AA', secretKey: testSecrets.alwaysPasses } as TestSite
    expect(await redeemVisit(testKey, '80.187.1.12', browserFingerprint)).toMatchObject({ success: true, metadata: { ephemeral_id: null } })
    const failed = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: 'v1.forged.token' } })
    expect(failed.json()).toMatchObject({ success: false, metadata: { ephemeral_id: null } })
    // Turnstile's path answers a failure as Turnstile does, with no metadata at all.
    const failedAtTurnstile = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload: { secret: site.secretKey, response: 'v1.forged.token' } })
    expect(failedAtTurnstile.json()).toEqual({ success: false, 'error-codes': ['invalid-input-response'], messages: [] })
  })
})

describe('EPHEMERAL_IDS=false, for the rolling upgrade from a version without ephemeral ids', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp({ env: { EPHEMERAL_IDS: 'false' } })
  })
  afterAll(() => service.close())

  it("issues tokens of the earlier format (nine claims, which that version reads), and Siteverify names no device", async () => {
    const site = await createTestSite(service.app)
    const headers = browserHeaders(site.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    const { token = '' } = (await submitSolution(service.app, headers, humanSubmission(challenge))).json<{ token?: string }>()
    expect(JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'))).toHaveLength(9)
    const answer = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload: { secret: site.secretKey, response: token } })
    expect(answer.json()).toMatchObject({ success: true, metadata: { ephemeral_id: null } })
  })
})
