import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testSecrets } from '../../src/domain/siteverify/test-secrets.js'
import { browserHeaders, createTestSite, fetchChallenge, humanSubmission, submitSolution, wrongNonce, type TestSite } from '../helpers/core-flow.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

const ALWAYS_PASSES = '1x00000000000000000000AA'
const ALWAYS_BLOCKS = '2x00000000000000000000AB'

/**
 * Test site keys, Turnstile's strings: a site's own CI drives its forms with a headless browser,
 * which scores as the bot it is; with these keys its submissions always pass (or always block),
 * and the tokens redeem with the test secrets only.
 */
describe('test site keys', () => {
  let service: TestApp
  let realSite: TestSite
  beforeAll(async () => {
    service = await buildTestApp({ config: { rateLimitPerMinute: 0 } })
    realSite = await createTestSite(service.app)
  })
  afterAll(() => service.close())

  /** A submission as a headless browser in CI makes it: a bot's user agent, no browser signals. */
  const asCiBrowser = (siteKey: string) => ({ ...browserHeaders(siteKey, 'http://localhost:8080'), 'user-agent': 'Mozilla/5.0 HeadlessChrome/140.0.0.0' })
  async function submitAsCi(siteKey: string, page: { pageAction?: string; cData?: string } = {}) {
    const headers = asCiBrowser(siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    const submission = { ...humanSubmission(challenge), fingerprint: { webdriver: true }, behaviorData: {}, ...page }
    return { challenge, response: await submitSolution(service.app, headers, submission) }
  }
  const siteverify = (secret: string, response: string) =>
    service.app.inject({ method: 'POST', url: '/siteverify', payload: { secret, response } }).then((answer) => answer.json<Record<string, unknown>>())
  const logRows = async () => (await service.app.database.query<{ count: string }>('SELECT count(*) AS count FROM verifications'))[0]?.count

  it('always pass, from any origin, at the lowest difficulty; the token redeems with a test secret only', async () => {
    await service.app.verificationLog.flush()
    const rowsBefore = await logRows()
    const { challenge, response } = await submitAsCi(ALWAYS_PASSES)
    expect(challenge.difficulty).toBeLessThanOrEqual(3)
    expect(response.statusCode).toBe(200)
    const verdict = response.json<{ success: boolean; riskScore: number; action: string; token?: string }>()
    expect(verdict).toMatchObject({ success: true, riskScore: 0, action: 'allow', token: expect.any(String) })

    expect(await siteverify(testSecrets.alwaysPasses, verdict.token ?? '')).toMatchObject({ success: true })
    // A real site's secret never accepts it: a test token cannot pass a production check.
    expect(await siteverify(realSite.secretKey, verdict.token ?? '')).toEqual(expect.objectContaining({ success: false, 'error-codes': ['invalid-input-response'] }))
    // Nothing lands in any site's log.
    await service.app.verificationLog.flush()
    expect(await logRows()).toBe(rowsBefore)
  })

  it("redeem with a passing test secret as the page's action, cData and hostname, so that a backend checking the action passes in CI", async () => {
    const { response } = await submitAsCi(ALWAYS_PASSES, { pageAction: 'signup', cData: 'order-7' })
    const token = response.json<{ token: string }>().token
    for (const secret of [testSecrets.alwaysPasses, testSecrets.recaptchaPasses, testSecrets.hcaptchaPasses]) {
      expect(await siteverify(secret, token)).toMatchObject({ success: true, action: 'signup', recommendedAction: 'allow', cdata: 'order-7', hostname: 'localhost', riskScore: 0 })
    }
    // Turnstile's dummy token, or any text that is no token of ours, keeps the fixed answer.
    expect(await siteverify(testSecrets.alwaysPasses, 'XXXX.DUMMY.TOKEN.XXXX')).toMatchObject({ success: true, action: 'allow', cdata: null, hostname: 'example.com' })
    // reCAPTCHA's and hCaptcha's test secrets answer their own vendor's dummy hostname, which backend libraries expect of them.
    expect(await siteverify(testSecrets.recaptchaPasses, 'XXXX.DUMMY.TOKEN.XXXX')).toMatchObject({ success: true, action: 'allow', cdata: null, hostname: 'testkey.google.com' })
    expect(await siteverify(testSecrets.hcaptchaPasses, 'XXXX.DUMMY.TOKEN.XXXX')).toMatchObject({ success: true, action: 'allow', cdata: null, hostname: 'dummy-key-pass' })
  })

  it("accept the other vendors' public test site keys as the passing key, so a moved page's CI redeems with that vendor's test secret", async () => {
    const vendorKeys = [
      ['3x00000000000000000000FF', testSecrets.alwaysPasses],
      ['6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI', testSecrets.recaptchaPasses],
      ['10000000-ffff-ffff-ffff-000000000001', testSecrets.hcaptchaPasses],
      ['20000000-ffff-ffff-ffff-000000000002', testSecrets.hcaptchaPasses],
    ] as const
    for (const [siteKey, secret] of vendorKeys) {
      const { response } = await submitAsCi(siteKey, { pageAction: 'login' })
      const verdict = response.json<{ success: boolean; token?: string }>()
      expect(verdict, siteKey).toMatchObject({ success: true, token: expect.any(String) })
      expect(await siteverify(secret, verdict.token ?? ''), siteKey).toMatchObject({ success: true, action: 'login', hostname: 'localhost' })
      expect(await siteverify(realSite.secretKey, verdict.token ?? ''), siteKey).toMatchObject({ success: false, 'error-codes': ['invalid-input-response'] })
    }
  })

  it('always block, with no token and no log row', async () => {
    await service.app.verificationLog.flush()
    const rowsBefore = await logRows()
    const { response } = await submitAsCi(ALWAYS_BLOCKS)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: false, riskScore: 100, action: 'block' })
    await service.app.verificationLog.flush()
    expect(await logRows()).toBe(rowsBefore)
  })

  it('count as action "test" in /metrics, never as allow or block', async () => {
    const count = async (action: string) => {
      const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
      return Number(new RegExp(`^tollgate_verifications_total\\{action="${action}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
    }
    const before = { allow: await count('allow'), block: await count('block'), test: await count('test') }
    await submitAsCi(ALWAYS_BLOCKS)
    await submitAsCi(ALWAYS_PASSES)
    expect({ allow: await count('allow'), block: await count('block'), test: await count('test') }).toEqual({ ...before, test: before.test + 2 })
  })

  it('still check the proof of work and the challenge: a wrong nonce or a replay is refused, with no log row', async () => {
    await service.app.verificationLog.flush()
    const rowsBefore = await logRows()
    const headers = asCiBrowser(ALWAYS_PASSES)
    const challenge = await fetchChallenge(service.app, headers)
    const good = humanSubmission(challenge)
    // At the lowest difficulty about half of all nonces solve it.
    const wrong = await submitSolution(service.app, headers, { ...good, nonce: wrongNonce(challenge) })
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json().error.code).toBe('solution_invalid')
    const replay = await submitSolution(service.app, headers, good)
    expect(replay.statusCode).toBe(400)
    expect(replay.json().error.code).toBe('challenge_invalid')
    await service.app.verificationLog.flush()
    expect(await logRows()).toBe(rowsBefore)
  })

  it('are only the documented strings: another key of that shape is unknown', async () => {
    expect((await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders('1x00000000000000000000ZZ') })).statusCode).toBe(401)
  })
})
