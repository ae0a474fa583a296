import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import type { VerificationBlockedEvent } from '../../src/plugins/events.js'
import { browserHeaders, createTestSite, humanSubmission, type TestSite } from '../helpers/core-flow.js'
import { hasRedis } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { readLoggedVerification } from '../helpers/verification-rows.js'

const BASE_DIFFICULTY = 4
/** The service sits behind a proxy on 127.0.0.1 (app.inject's default peer), which TRUST_PROXY names. */
const PROXY = '127.0.0.1'
const HOME_ADDRESS = '80.187.100.1' // Deutsche Telekom, DE
const HETZNER = '5.9.0.1' // hosting, DE
const HETZNER_IPV6 = '2a01:4f8::1'
const MULLVAD = '185.65.134.1' // VPN, NL

/**
 * Network intelligence and history in the whole flow (issue 7): the client address comes from a
 * trusted X-Forwarded-For; its network and recent outcomes raise both the score of its
 * verifications and the difficulty of its next challenges.
 */
describe.each([
  { keyValue: 'memory' as const, available: true },
  { keyValue: 'redis' as const, available: hasRedis },
])('risk intelligence on $keyValue', ({ keyValue, available }) => {
  let service: TestApp
  let site: TestSite

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ keyValue, env: { TRUST_PROXY: PROXY }, config: { rateLimitPerMinute: 0 } })
    site = await createTestSite(service.app, { settings: { difficulty: BASE_DIFFICULTY } })
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  async function challengeFor(target: TestSite, clientIp: string, peer = PROXY, headers = browserHeaders(target.siteKey)): Promise<Challenge> {
    const response = await service.app.inject({
      method: 'POST', url: '/api/v1/challenge', remoteAddress: peer, headers: { ...headers, 'x-forwarded-for': clientIp },
    })
    expect(response.statusCode).toBe(200)
    return response.json<Challenge>()
  }

  async function verify(target: TestSite, clientIp: string, submission: object, headers = browserHeaders(target.siteKey)) {
    const response = await service.app.inject({
      method: 'POST', url: '/api/v1/verify', remoteAddress: PROXY, headers: { ...headers, 'x-forwarded-for': clientIp }, payload: submission,
    })
    expect(response.statusCode).toBe(200)
    return response.json<{ riskScore: number; action: string; token?: string }>()
  }

  const logRowOf = (challengeId: string) => readLoggedVerification(service.app, challengeId)

  it.skipIf(!available)('serves a person on a home connection at the base difficulty, scored 0, with its country logged', async () => {
    const challenge = await challengeFor(site, HOME_ADDRESS)
    expect(challenge.difficulty).toBe(BASE_DIFFICULTY)
    expect(await verify(site, HOME_ADDRESS, humanSubmission(challenge))).toMatchObject({ riskScore: 0, action: 'allow' })
    expect(await logRowOf(challenge.challengeId)).toMatchObject({ anomalies: [], country_code: 'DE', client_ip: HOME_ADDRESS })
  })

  it.skipIf(!available)('raises the score and the next challenge\'s difficulty for a datacenter address', async () => {
    const challenge = await challengeFor(site, HETZNER)
    expect(challenge.difficulty).toBe(BASE_DIFFICULTY + 2)
    const result = await verify(site, HETZNER, humanSubmission(challenge))
    expect(result).toMatchObject({ riskScore: 30, action: 'allow' })
    expect(await logRowOf(challenge.challengeId)).toMatchObject({ anomalies: ['datacenter_ip'], risk_score: 30, country_code: 'DE' })
    expect((await challengeFor(site, HETZNER)).difficulty).toBe(BASE_DIFFICULTY + 2)
    expect((await challengeFor(site, HETZNER_IPV6)).difficulty).toBe(BASE_DIFFICULTY + 2)
  })

  it.skipIf(!available)('flags a VPN address with one extra bit and vpn_detected', async () => {
    const challenge = await challengeFor(site, MULLVAD)
    expect(challenge.difficulty).toBe(BASE_DIFFICULTY + 1)
    expect(await verify(site, MULLVAD, humanSubmission(challenge))).toMatchObject({ riskScore: 20, action: 'allow' })
    expect(await logRowOf(challenge.challengeId)).toMatchObject({ anomalies: ['vpn_detected'], country_code: 'NL' })
  })

  it.skipIf(!available)('ignores X-Forwarded-For from a peer TRUST_PROXY does not name', async () => {
    const challenge = await challengeFor(site, HETZNER, '198.51.100.7')
    expect(challenge.difficulty).toBe(BASE_DIFFICULTY)
  })

  it.skipIf(!available)('applies the site\'s own thresholds: a stricter site challenges the datacenter address', async () => {
    const strict = await createTestSite(service.app, { settings: { difficulty: BASE_DIFFICULTY, challengeThreshold: 25, blockThreshold: 60 } })
    const challenge = await challengeFor(strict, HETZNER)
    expect(await verify(strict, HETZNER, humanSubmission(challenge))).toMatchObject({ riskScore: 30, action: 'challenge' })
    // The step-up round comes on top of the network's bits.
    expect((await challengeFor(strict, HETZNER)).difficulty).toBe(BASE_DIFFICULTY + 2 + 2)
  })

  it.skipIf(!available)('announces a block with the country and the network labels', async () => {
    const events: VerificationBlockedEvent[] = []
    const listener = (event: VerificationBlockedEvent) => events.push(event)
    service.app.events.on('verification.blocked', listener)
    try {
      const scripted = { 'x-site-key': site.siteKey, 'user-agent': 'python-requests/2.32.3' }
      const challenge = await challengeFor(site, MULLVAD, PROXY, scripted)
      const result = await verify(site, MULLVAD, { ...humanSubmission(challenge), fingerprint: {}, behaviorData: {} }, scripted)
      expect(result.action).toBe('block')
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({ siteId: site.site.id, riskScore: 100, countryCode: 'NL' })
      expect(events[0]?.anomalies).toEqual(expect.arrayContaining(['bot_user_agent', 'vpn_detected']))
    } finally {
      service.app.events.off('verification.blocked', listener)
    }
  })

  it.skipIf(!available)('remembers recent blocks: the address pays more work and scores higher afterwards', async () => {
    const address = '80.187.100.77'
    const own = await createTestSite(service.app, { settings: { difficulty: BASE_DIFFICULTY } })
    const scripted = { 'x-site-key': own.siteKey, 'user-agent': 'curl/8.5.0' }
    for (let i = 0; i < 2; i++) {
      const challenge = await challengeFor(own, address, PROXY, scripted)
      expect(challenge.difficulty).toBe(BASE_DIFFICULTY)
      expect((await verify(own, address, { ...humanSubmission(challenge), fingerprint: {} }, scripted)).action).toBe('block')
    }
    // Even dressed as a browser now, the address is remembered.
    const challenge = await challengeFor(own, address)
    expect(challenge.difficulty).toBe(BASE_DIFFICULTY + 2)
    expect(await verify(own, address, humanSubmission(challenge))).toMatchObject({ riskScore: 30, action: 'allow' })
    expect(await logRowOf(challenge.challengeId)).toMatchObject({ anomalies: ['recent_blocks'] })
    // Another site does not share this site's history.
    expect((await challengeFor(site, address)).difficulty).toBe(BASE_DIFFICULTY)
  })
})
