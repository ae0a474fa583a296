import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { VerificationBlockedEvent } from '../../src/plugins/events.js'
import {
  browserHeaders,
  createTestSite,
  fetchChallenge,
  humanSubmission,
  passVerification,
  submitSolution,
  type TestSite,
} from '../helpers/core-flow.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

interface LogRow {
  challenge_id: string | null
  action: string
  error_code: string | null
  risk_score: number | null
  anomalies: string[]
  country_code: string | null
  client_ip: string | null
  hostname: string | null
  user_agent: string | null
  difficulty: number | null
  solve_time_ms: number | null
  step_ups: number
}

describe('POST /api/v1/verify', () => {
  let service: TestApp
  let site: TestSite
  beforeAll(async () => {
    service = await buildTestApp({ config: { rateLimitPerMinute: 0 } })
    site = await createTestSite(service.app)
  })
  afterAll(() => service.close())

  async function logRowsOf(siteId: string, challengeId: string): Promise<LogRow[]> {
    await service.app.verificationLog.flush()
    return service.app.database.query<LogRow>('SELECT * FROM verifications WHERE site_id = $1 AND challenge_id = $2', [siteId, challengeId])
  }

  it('answers allow with a token: exactly the spec\'s Verification result', async () => {
    const before = Date.now()
    const response = await passVerification(service.app, browserHeaders(site.siteKey))
    const after = Date.now()
    expect(response.statusCode).toBe(200)
    const result = response.json<{ expiresAt: string }>()
    expect(Object.keys(result).sort()).toEqual(['action', 'expiresAt', 'riskScore', 'success', 'token'])
    expect(result).toEqual({
      success: true,
      token: expect.stringMatching(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/),
      riskScore: 0,
      action: 'allow',
      expiresAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    })
    // Five minutes from the moment of issue, which lies somewhere inside the request: a slow host
    // stretches the request, not the validity.
    const expiresAt = Date.parse(result.expiresAt)
    expect(expiresAt).toBeGreaterThanOrEqual(before + 300_000)
    expect(expiresAt).toBeLessThanOrEqual(after + 300_000)
  })

  it('logs the verification with its facts, off the response path', async () => {
    const headers = browserHeaders(site.siteKey, 'https://shop.example.com')
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, { ...headers, 'accept-language': '' }, { ...humanSubmission(challenge), solveTimeMs: 2 })
    expect(response.json()).toMatchObject({ success: true, riskScore: 15, action: 'allow' })
    expect(await logRowsOf(site.site.id, challenge.challengeId)).toEqual([
      expect.objectContaining({
        action: 'allow',
        error_code: null,
        risk_score: 15,
        anomalies: ['missing_accept_language'],
        country_code: 'XX',
        client_ip: '127.0.0.1',
        hostname: 'shop.example.com',
        user_agent: headers['user-agent'],
        difficulty: 4,
        solve_time_ms: 2,
        step_ups: 0,
      }),
    ])
  })

  it('logs a refused submission as rejected with its error code', async () => {
    const headers = browserHeaders(site.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    const nonce = humanSubmission(challenge).nonce
    await submitSolution(service.app, headers, humanSubmission(challenge, nonce))
    const replay = await submitSolution(service.app, headers, humanSubmission(challenge, nonce))
    expect(replay.statusCode).toBe(400)
    const rows = await logRowsOf(site.site.id, challenge.challengeId)
    expect(rows.map((row) => [row.action, row.error_code])).toEqual(expect.arrayContaining([['allow', null], ['rejected', 'challenge_invalid']]))
  })

  it('logs a submission from an origin the site does not list, with that origin\'s hostname', async () => {
    const guarded = await createTestSite(service.app, { domains: ['shop.example.com'] })
    const challenge = await fetchChallenge(service.app, browserHeaders(guarded.siteKey, 'https://shop.example.com'))
    const foreign = await submitSolution(service.app, browserHeaders(guarded.siteKey, 'https://copycat.example'), humanSubmission(challenge))
    expect(foreign.json().error.code).toBe('origin_not_allowed')
    await service.app.verificationLog.flush()
    const rows = await service.app.database.query<LogRow>('SELECT * FROM verifications WHERE site_id = $1', [guarded.site.id])
    expect(rows).toEqual([expect.objectContaining({ action: 'rejected', error_code: 'origin_not_allowed', hostname: 'copycat.example' })])
  })

  it('logs a submission refused for a store outage with the code it was answered with', async () => {
    const headers = browserHeaders(site.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    const outage = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' })
    const take = vi.spyOn(service.app.keyValue, 'take').mockRejectedValueOnce(outage)
    try {
      const response = await submitSolution(service.app, headers, humanSubmission(challenge))
      expect(response.statusCode).toBe(503)
      expect(response.json().error.code).toBe('service_unavailable')
    } finally {
      take.mockRestore()
    }
    const rows = await logRowsOf(site.site.id, challenge.challengeId)
    expect(rows.map((row) => [row.action, row.error_code])).toEqual([['rejected', 'service_unavailable']])
  })

  it('takes the hostname from Referer when Origin is absent', async () => {
    const { origin: _origin, ...headers } = browserHeaders(site.siteKey)
    const withReferer = { ...headers, referer: 'https://blog.example.org/post/1?x=1' }
    const challenge = await fetchChallenge(service.app, withReferer)
    expect((await submitSolution(service.app, withReferer, humanSubmission(challenge))).statusCode).toBe(200)
    expect((await logRowsOf(site.site.id, challenge.challengeId))[0]?.hostname).toBe('blog.example.org')
  })

  it('scores a submission without Origin or Referer with missing_origin', async () => {
    const { origin: _origin, ...headers } = browserHeaders(site.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, headers, humanSubmission(challenge))
    expect(response.json()).toMatchObject({ success: true, riskScore: 10, action: 'allow' })
    expect((await logRowsOf(site.site.id, challenge.challengeId))[0]).toMatchObject({ anomalies: ['missing_origin'], hostname: null })
  })

  it.each([
    ['null (a sandboxed frame)', 'null'],
    ['not a host name', `https://${'a'.repeat(255)}.example`],
    ['unparseable', 'https://'],
  ])('scores an Origin that names no host (%s) with missing_origin, as one that is absent', async (_case, origin) => {
    const headers = { ...browserHeaders(site.siteKey), origin }
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, headers, humanSubmission(challenge))
    expect(response.json()).toMatchObject({ success: true, riskScore: 10, action: 'allow' })
    expect((await logRowsOf(site.site.id, challenge.challengeId))[0]).toMatchObject({ anomalies: ['missing_origin'], hostname: null })
  })

  it('blocks a scripted client, gives no token and announces verification.blocked', async () => {
    const events: VerificationBlockedEvent[] = []
    const listener = (event: VerificationBlockedEvent) => events.push(event)
    service.app.events.on('verification.blocked', listener)
    try {
      const headers = { 'x-site-key': site.siteKey, 'user-agent': 'python-requests/2.31.0' }
      const challenge = await fetchChallenge(service.app, headers)
      const response = await submitSolution(service.app, headers, {
        ...humanSubmission(challenge),
        fingerprint: {},
        behaviorData: {},
      })
      expect(response.statusCode).toBe(200)
      const result = response.json()
      expect(result).toEqual({ success: false, riskScore: 100, action: 'block' })
      expect(events).toEqual([
        {
          siteId: site.site.id,
          // The site as the verification read it: the webhook needs no database read for it.
          site: expect.objectContaining({ id: site.site.id, siteKey: site.siteKey }),
          timestamp: expect.any(Date),
          riskScore: 100,
          anomalies: ['missing_origin', 'bot_user_agent', 'missing_accept_language', 'missing_fetch_metadata', 'incomplete_fingerprint', 'canvas_missing', 'webgl_missing', 'no_interaction'],
          countryCode: 'XX',
          // What finds the block again: its log row (the visitor's reference), and no device, host or page action sent.
          verificationId: response.headers['x-request-id'],
          device: null,
          hostname: null,
          pageAction: null,
        },
      ])
      expect((await logRowsOf(site.site.id, challenge.challengeId))[0]).toMatchObject({ id: response.headers['x-request-id'], action: 'block', risk_score: 100 })
    } finally {
      service.app.events.off('verification.blocked', listener)
    }
  })

  it('lets a few untrusted events the page dispatched pass among a person\'s own, and labels input a script dispatched alone', async () => {
    const headers = browserHeaders(site.siteKey)
    const person = { mouseMovements: 88, keystrokes: 14, clicks: 2, scrolls: 5, touches: 0, focusChanges: 3, untrustedEvents: 2 }
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, headers, { ...humanSubmission(challenge), behaviorData: person })
    expect(response.json()).toMatchObject({ success: true, riskScore: 0, action: 'allow' })

    const scripted = { mouseMovements: 40, keystrokes: 9, clicks: 1, scrolls: 0, touches: 0, focusChanges: 2, untrustedEvents: 50 }
    const driven = await fetchChallenge(service.app, headers)
    await submitSolution(service.app, headers, { ...humanSubmission(driven), behaviorData: scripted })
    expect((await logRowsOf(site.site.id, driven.challengeId))[0]).toMatchObject({ anomalies: ['synthetic_input'], risk_score: 25 })
  })

  it('flags a claimed solve time longer than the server observed', async () => {
    const headers = browserHeaders(site.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, headers, { ...humanSubmission(challenge), solveTimeMs: 60_000 })
    expect(response.json()).toMatchObject({ riskScore: 50, action: 'challenge', success: false })
    expect((await logRowsOf(site.site.id, challenge.challengeId))[0]?.anomalies).toEqual(['solve_time_impossible'])
  })

  it("labels no_interaction for the gate's page action too, which any client can claim (docs/risk.md)", async () => {
    // A site of its own, which the other tests' verifications of this client do not weigh in.
    const gated = await createTestSite(service.app)
    const headers = browserHeaders(gated.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, headers, { ...humanSubmission(challenge), behaviorData: {}, pageAction: 'gate' })
    expect(response.json()).toMatchObject({ riskScore: 15, action: 'allow', success: true })
    expect((await logRowsOf(gated.site.id, challenge.challengeId))[0]).toMatchObject({ anomalies: ['no_interaction'], page_action: 'gate' })
  })

  it('accepts further fingerprint and behaviour keys within bounds', async () => {
    const headers = browserHeaders(site.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, headers, {
      ...humanSubmission(challenge),
      fingerprint: { canvas: 'ab12', webgl: 'cd34', timezone: 'Europe/Berlin', languages: ['de-DE', 'en'], hardwareConcurrency: 8, webdriver: false },
      behaviorData: { mouseMovements: 3, keystrokes: 0, scrolls: 2, focusChanges: 1, firstInteractionMs: 812.5 },
    })
    expect(response.statusCode).toBe(200)
    expect(response.json().action).toBe('allow')
  })
})
