import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserFingerprint, browserHeaders, createTestSite, humanSubmission, type TestSite } from '../helpers/core-flow.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

interface Round {
  difficulty: number
  riskScore: number
  action: string
  hasToken: boolean
}

/**
 * Step-up (issue item 4): a challenge action makes the next challenge for the same client and site
 * harder; solved step-ups lower the next score; after the maximum the outcome is allow or block.
 * Each test uses its own client address so that their step-up states stay apart.
 */
describe('step-up', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp({ config: { rateLimitPerMinute: 0 } })
  })
  afterAll(() => service.close())

  // A browser that hides canvas, sends no Accept-Language and has not been touched: 15 + 15 + 15 = 45.
  const suspicious = (challenge: Challenge) => ({ ...humanSubmission(challenge), fingerprint: { ...browserFingerprint, canvas: '' }, behaviorData: {} })
  // Placeholders for canvas and WebGL on top of that: 25 + 20 + 15 + 15 = 75 (block without step-up credit).
  const worse = (challenge: Challenge) => ({ ...humanSubmission(challenge), fingerprint: { ...browserFingerprint, canvas: '0', webgl: 'none' }, behaviorData: {} })

  async function playRound(site: TestSite, clientIp: string, submissionOf: (challenge: Challenge) => object, browser: Record<string, string> = {}): Promise<Round> {
    const headers = { ...browserHeaders(site.siteKey), 'accept-language': '', ...browser }
    const issued = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers, remoteAddress: clientIp })
    const challenge = issued.json<Challenge>()
    const verified = await service.app.inject({
      method: 'POST',
      url: '/api/v1/verify',
      headers,
      remoteAddress: clientIp,
      payload: submissionOf(challenge),
    })
    expect(verified.statusCode).toBe(200)
    const result = verified.json<{ riskScore: number; action: string; token?: string }>()
    return { difficulty: challenge.difficulty, riskScore: result.riskScore, action: result.action, hasToken: result.token !== undefined }
  }

  it('raises the difficulty by 2 bits per round and lets the solved step-up lower the score to allow', async () => {
    const site = await createTestSite(service.app, { settings: { difficulty: 4, maxStepUps: 2 } })
    expect(await playRound(site, '203.0.113.10', suspicious)).toEqual({ difficulty: 4, riskScore: 45, action: 'challenge', hasToken: false })
    expect(await playRound(site, '203.0.113.10', suspicious)).toEqual({ difficulty: 6, riskScore: 30, action: 'allow', hasToken: true })
    // The sequence is over: the next challenge is back at the base difficulty.
    expect((await playRound(site, '203.0.113.10', suspicious)).difficulty).toBe(4)
  })

  it('credits one pending step-up once: of challenges fetched while it was pending, only the first solved earns it', async () => {
    const site = await createTestSite(service.app, { settings: { difficulty: 4, maxStepUps: 2 } })
    const clientIp = '203.0.113.40'
    expect(await playRound(site, clientIp, suspicious)).toMatchObject({ riskScore: 45, action: 'challenge' })
    const headers = { ...browserHeaders(site.siteKey), 'accept-language': '' }
    const prefetched = []
    for (let index = 0; index < 3; index++) {
      prefetched.push((await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers, remoteAddress: clientIp })).json<Challenge>())
    }
    // All three were issued for the pending round (harder), but the round is credited once.
    expect(prefetched.map((challenge) => challenge.difficulty)).toEqual([6, 6, 6])
    const results = await Promise.all(
      prefetched.map(async (challenge) =>
        (await service.app.inject({ method: 'POST', url: '/api/v1/verify', headers, remoteAddress: clientIp, payload: suspicious(challenge) })).json<{
          riskScore: number
          action: string
        }>(),
      ),
    )
    expect(results.filter((result) => result.action === 'allow')).toEqual([{ riskScore: 30, action: 'allow', success: true, token: expect.any(String), expiresAt: expect.any(String) }])
    expect(results.filter((result) => result.action !== 'allow')).toEqual([
      { riskScore: 45, action: 'challenge', success: false },
      { riskScore: 45, action: 'challenge', success: false },
    ])
  })

  it('a challenge left over from an earlier round does not take the round pending now', async () => {
    // Thresholds 20 and 90 keep the worse browser (75) in the challenge band for three rounds.
    const site = await createTestSite(service.app, { settings: { difficulty: 4, challengeThreshold: 20, blockThreshold: 90, maxStepUps: 3 } })
    const clientIp = '203.0.113.60'
    const headers = { ...browserHeaders(site.siteKey), 'accept-language': '' }
    const fetchChallenge = async () => (await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers, remoteAddress: clientIp })).json<Challenge>()
    const submit = async (payload: object) =>
      (await service.app.inject({ method: 'POST', url: '/api/v1/verify', headers, remoteAddress: clientIp, payload })).json<{ riskScore: number; action: string }>()

    expect(await playRound(site, clientIp, worse)).toMatchObject({ difficulty: 4, riskScore: 75, action: 'challenge' })
    // Two tabs fetch a challenge in round 1; one of them solves it and is asked for round 2.
    const [leftOver, solved] = [await fetchChallenge(), await fetchChallenge()]
    expect(await submit(worse(solved))).toMatchObject({ riskScore: 60, action: 'challenge' })
    const current = await fetchChallenge()
    expect(current.difficulty).toBe(8)
    // The other tab submits its round-1 challenge late, with the same signals: judged as a first
    // round (no credit), and challenged again; that opens no round over the one pending.
    expect(await submit(worse(leftOver))).toMatchObject({ riskScore: 75, action: 'challenge' })
    // Round 2 is still pending: its challenge earns the credit of both rounds (75 - 30).
    expect(await submit(worse(current))).toMatchObject({ riskScore: 45, action: 'challenge' })
  })

  it('does not let the rounds paid for mild doubts launder evidence that blocks on its own', async () => {
    const site = await createTestSite(service.app, { settings: { difficulty: 4, maxStepUps: 2 } })
    const clientIp = '203.0.113.70'
    // Otherwise a person's signals, but navigator.webdriver is set: 70, the block threshold, alone.
    const automated = (challenge: Challenge) => ({ ...humanSubmission(challenge), fingerprint: { ...browserFingerprint, webdriver: true } })
    expect(await playRound(site, clientIp, suspicious)).toEqual({ difficulty: 4, riskScore: 45, action: 'challenge', hasToken: false })
    // No credit for the round solved (it would make 55: challenged again, and allowed at the next round).
    expect(await playRound(site, clientIp, automated, { 'accept-language': 'en-US,en;q=0.9' })).toEqual({ difficulty: 6, riskScore: 70, action: 'block', hasToken: false })
  })

  it('keeps step-up state per browser on one address: two people behind one NAT each get their own rounds', async () => {
    const site = await createTestSite(service.app, { settings: { difficulty: 4, maxStepUps: 1 } })
    const clientIp = '203.0.113.50'
    // A second browser: the same make, another build (its own User-Agent).
    const other = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.85 Safari/537.36' }
    // Their rounds interleave; neither is handed the other's harder challenge or takes its credit.
    expect(await playRound(site, clientIp, suspicious)).toEqual({ difficulty: 4, riskScore: 45, action: 'challenge', hasToken: false })
    expect(await playRound(site, clientIp, suspicious, other)).toEqual({ difficulty: 4, riskScore: 45, action: 'challenge', hasToken: false })
    expect(await playRound(site, clientIp, suspicious)).toEqual({ difficulty: 6, riskScore: 30, action: 'allow', hasToken: true })
    expect(await playRound(site, clientIp, suspicious, other)).toEqual({ difficulty: 6, riskScore: 30, action: 'allow', hasToken: true })
  })

  it('keeps step-up state per client: another address starts at the base', async () => {
    const site = await createTestSite(service.app, { settings: { difficulty: 4 } })
    await playRound(site, '203.0.113.20', suspicious)
    expect((await playRound(site, '203.0.113.21', suspicious)).difficulty).toBe(4)
  })

  it('keeps step-up state per IPv6 /64: another address of the /64 inherits it, another /64 does not', async () => {
    const site = await createTestSite(service.app, { settings: { difficulty: 4 } })
    expect(await playRound(site, '2001:db8:1:2::10', suspicious)).toMatchObject({ difficulty: 4, action: 'challenge' })
    const difficultyFor = async (clientIp: string) => {
      const issued = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey), remoteAddress: clientIp })
      return issued.json<Challenge>().difficulty
    }
    // Rotating through the /64's addresses (privacy extensions, or on purpose) does not shed the round.
    expect(await difficultyFor('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe(6)
    expect(await difficultyFor('2001:db8:1:3::10')).toBe(4)
  })

  it('after the site\'s maximum of step-ups decides allow or block at the middle of the challenge band', async () => {
    // Thresholds 20 and 90: the challenge band's middle is 55; one step-up at most.
    const site = await createTestSite(service.app, { settings: { difficulty: 4, challengeThreshold: 20, blockThreshold: 90, maxStepUps: 1 } })
    expect(await playRound(site, '203.0.113.30', worse)).toEqual({ difficulty: 4, riskScore: 75, action: 'challenge', hasToken: false })
    expect(await playRound(site, '203.0.113.30', worse)).toEqual({ difficulty: 6, riskScore: 60, action: 'block', hasToken: false })

    expect(await playRound(site, '203.0.113.31', suspicious)).toMatchObject({ riskScore: 45, action: 'challenge' })
    expect(await playRound(site, '203.0.113.31', suspicious)).toEqual({ difficulty: 6, riskScore: 30, action: 'allow', hasToken: true })
  })

  it('logs the step-ups with each verification so that the score can be recomputed', async () => {
    const site = await createTestSite(service.app, { settings: { difficulty: 4 } })
    await playRound(site, '203.0.113.40', suspicious)
    await playRound(site, '203.0.113.40', suspicious)
    await service.app.verificationLog.flush()
    const rows = await service.app.database.query<{ action: string; risk_score: number; step_ups: number; difficulty: number }>(
      'SELECT action, risk_score, step_ups, difficulty FROM verifications WHERE site_id = $1 ORDER BY created_at, step_ups',
      [site.site.id],
    )
    expect(rows).toEqual([
      { action: 'challenge', risk_score: 45, step_ups: 0, difficulty: 4 },
      { action: 'allow', risk_score: 30, step_ups: 1, difficulty: 6 },
    ])
  })
})
