import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifySolution } from '../../src/domain/proof-of-work/verify-solution.js'
import {
  browserHeaders,
  createTestSite,
  fetchChallenge,
  humanSubmission,
  obtainToken,
  submitSolution,
  type TestSite,
} from '../helpers/core-flow.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

/** Issue item 7: bad input gets a stable error code, never a 500 and never a token. */
describe('bad input to the public flow', () => {
  let service: TestApp
  let siteA: TestSite
  let siteB: TestSite
  beforeAll(async () => {
    service = await buildTestApp({ config: { rateLimitPerMinute: 0 } })
    siteA = await createTestSite(service.app)
    siteB = await createTestSite(service.app)
  })
  afterAll(() => service.close())

  function expectRefusal(response: LightMyRequestResponse, status: number, code: string): void {
    expect(response.statusCode).toBe(status)
    expect(response.body).not.toContain('"token"')
    expect(response.json()).toEqual({ error: expect.objectContaining({ code, message: expect.any(String), requestId: expect.any(String) }) })
  }

  async function validSubmission(site: TestSite = siteA) {
    return humanSubmission(await fetchChallenge(service.app, browserHeaders(site.siteKey)))
  }

  it('missing site key: 401 invalid_site_key', async () => {
    const { 'x-site-key': _omitted, ...headers } = browserHeaders(siteA.siteKey)
    expectRefusal(await submitSolution(service.app, headers, await validSubmission()), 401, 'invalid_site_key')
  })

  it('unknown site key: 401 invalid_site_key', async () => {
    expectRefusal(await submitSolution(service.app, browserHeaders('tgk_doesnotexist'), await validSubmission()), 401, 'invalid_site_key')
  })

  it('challengeId not a UUID: 400 validation_error naming the field', async () => {
    const response = await submitSolution(service.app, browserHeaders(siteA.siteKey), { ...(await validSubmission()), challengeId: 'not-a-uuid' })
    expectRefusal(response, 400, 'validation_error')
    expect(response.json().error.details).toEqual([expect.objectContaining({ field: 'challengeId' })])
  })

  it.each([
    ['abc', 'letters'],
    ['-1', 'a sign'],
    ['01', 'a leading zero'],
    ['12345678901234567890', '20 digits'],
    ['', 'nothing'],
    ['9007199254740992', '2^53 itself'],
    ['1.5', 'a fraction'],
  ])('nonce %j (%s): 400 validation_error naming nonce, and the challenge is still there to solve', async (nonce) => {
    const submission = await validSubmission()
    const response = await submitSolution(service.app, browserHeaders(siteA.siteKey), { ...submission, nonce })
    expectRefusal(response, 400, 'validation_error')
    expect(response.json().error.details).toEqual([expect.objectContaining({ field: 'nonce' })])
    // Input is validated before the challenge is taken (docs/core-flow.md, section 3).
    expect((await submitSolution(service.app, browserHeaders(siteA.siteKey), submission)).json().token).toEqual(expect.any(String))
  })

  it.each<[unknown, string]>([
    [-1, 'negative'],
    [12.5, 'fractional'],
    ['soon', 'text'],
    // Each of these would have been read as 0 or 1 by a converting validator, and got a token.
    [null, 'null'],
    [true, 'a boolean'],
    ['1200', 'a number in a string'],
  ])('solveTimeMs %j (%s): 400 validation_error', async (solveTimeMs) => {
    const response = await submitSolution(service.app, browserHeaders(siteA.siteKey), { ...(await validSubmission()), solveTimeMs })
    expectRefusal(response, 400, 'validation_error')
    expect(response.json().error.details).toEqual([expect.objectContaining({ field: 'solveTimeMs' })])
  })

  it.each<[string, 'nonce' | 'challengeId', (submission: { challengeId: string; nonce: string }) => unknown]>([
    ['nonce as a JSON number', 'nonce', (submission) => Number(submission.nonce)],
    ['challengeId in an array', 'challengeId', (submission) => [submission.challengeId]],
  ])('%s: 400 validation_error, not read as the text it holds', async (_case, field, replace) => {
    const submission = await validSubmission()
    const response = await submitSolution(service.app, browserHeaders(siteA.siteKey), { ...submission, [field]: replace(submission) })
    expectRefusal(response, 400, 'validation_error')
    expect(response.json().error.details).toEqual([expect.objectContaining({ field })])
  })

  it.each([['a string'], [['an', 'array']], [null], [42]])('fingerprint %j: 400 validation_error', async (fingerprint) => {
    const response = await submitSolution(service.app, browserHeaders(siteA.siteKey), { ...(await validSubmission()), fingerprint })
    expectRefusal(response, 400, 'validation_error')
    expect(response.json().error.details).toEqual([expect.objectContaining({ field: 'fingerprint' })])
  })

  it('behaviorData not an object, or with a negative count: 400 validation_error', async () => {
    for (const behaviorData of ['x', { mouseMovements: -3 }]) {
      expectRefusal(
        await submitSolution(service.app, browserHeaders(siteA.siteKey), { ...(await validSubmission()), behaviorData }),
        400,
        'validation_error',
      )
    }
  })

  it.each([['yes'], [-1], [1.5], [65]])('fingerprint.patchedNatives %j (a count from 0 to 64): 400 validation_error', async (patchedNatives) => {
    const submission = await validSubmission()
    const response = await submitSolution(service.app, browserHeaders(siteA.siteKey), { ...submission, fingerprint: { ...submission.fingerprint, patchedNatives } })
    expectRefusal(response, 400, 'validation_error')
    expect(response.json().error.details).toEqual([expect.objectContaining({ field: 'fingerprint.patchedNatives' })])
  })

  it('fingerprint with nested objects or too many keys: 400 validation_error', async () => {
    const nested = { canvas: 'ab', webgl: 'cd', plugins: { deep: { deeper: true } } }
    const wide = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`key${index}`, index]))
    for (const fingerprint of [nested, wide]) {
      expectRefusal(
        await submitSolution(service.app, browserHeaders(siteA.siteKey), { ...(await validSubmission()), fingerprint }),
        400,
        'validation_error',
      )
    }
  })

  it.each(['challengeId', 'nonce', 'solveTimeMs', 'fingerprint', 'behaviorData'])('missing %s: 400 validation_error', async (field) => {
    const body: Record<string, unknown> = { ...(await validSubmission()) }
    delete body[field]
    const response = await submitSolution(service.app, browserHeaders(siteA.siteKey), body)
    expectRefusal(response, 400, 'validation_error')
    expect(response.json().error.details).toEqual([expect.objectContaining({ field })])
  })

  it('malformed JSON: 400 validation_error', async () => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/api/v1/verify',
      headers: { ...browserHeaders(siteA.siteKey), 'content-type': 'application/json' },
      payload: '{"challengeId":',
    })
    expectRefusal(response, 400, 'validation_error')
  })

  it.each([undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
    'a valid submission sent as %s instead of JSON: 400 validation_error (a malformed body, DESIGN section 3)',
    async (contentType) => {
      const { 'content-type': _json, ...headers } = browserHeaders(siteA.siteKey)
      const response = await service.app.inject({
        method: 'POST',
        url: '/api/v1/verify',
        headers: { ...headers, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
        payload: JSON.stringify(await validSubmission()),
      })
      expectRefusal(response, 400, 'validation_error')
    },
  )

  it('oversized body (over 16 KiB): 413 payload_too_large', async () => {
    const submission = await validSubmission()
    const response = await submitSolution(service.app, browserHeaders(siteA.siteKey), {
      ...submission,
      fingerprint: { ...submission.fingerprint, padding: 'x'.repeat(1000) },
      behaviorData: Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`pad${index}`, 'y'.repeat(1000)])),
    })
    expectRefusal(response, 413, 'payload_too_large')
  })

  it('expired challenge: 400 challenge_expired', async () => {
    const shortLived = await createTestSite(service.app, { settings: { challengeLifetimeSeconds: 1 } })
    const headers = browserHeaders(shortLived.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    expectRefusal(await submitSolution(service.app, headers, humanSubmission(challenge)), 400, 'challenge_expired')
  })

  it('unknown challenge: 400 challenge_invalid', async () => {
    const response = await submitSolution(service.app, browserHeaders(siteA.siteKey), {
      ...(await validSubmission()),
      challengeId: '00000000-0000-4000-8000-000000000000',
    })
    expectRefusal(response, 400, 'challenge_invalid')
  })

  it('replayed challenge: 400 challenge_invalid, never a second token', async () => {
    const submission = await validSubmission()
    expect((await submitSolution(service.app, browserHeaders(siteA.siteKey), submission)).json().token).toEqual(expect.any(String))
    expectRefusal(await submitSolution(service.app, browserHeaders(siteA.siteKey), submission), 400, 'challenge_invalid')
  })

  it('another site\'s challenge: 400 challenge_invalid', async () => {
    const submissionForB = await validSubmission(siteB)
    expectRefusal(await submitSolution(service.app, browserHeaders(siteA.siteKey), submissionForB), 400, 'challenge_invalid')
  })

  it('wrong nonce: 400 solution_invalid', async () => {
    const headers = browserHeaders(siteA.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    let wrong = 1
    while (verifySolution(challenge, String(wrong))) wrong++
    expectRefusal(await submitSolution(service.app, headers, humanSubmission(challenge, String(wrong))), 400, 'solution_invalid')
  })

  describe('at Siteverify (always 200, Turnstile error codes)', () => {
    const siteverify = (payload: Record<string, string>) => service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload })

    it('replayed token: timeout-or-duplicate', async () => {
      const token = await obtainToken(service.app, browserHeaders(siteA.siteKey))
      expect((await siteverify({ secret: siteA.secretKey, response: token })).json().success).toBe(true)
      const replay = await siteverify({ secret: siteA.secretKey, response: token })
      expect(replay.statusCode).toBe(200)
      expect(replay.json()).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    })

    it('wrong secret: invalid-input-secret', async () => {
      const token = await obtainToken(service.app, browserHeaders(siteA.siteKey))
      const response = await siteverify({ secret: 'tgs_wrongwrongwrongwrongwrongwrongwrongwrongwro', response: token })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({ success: false, 'error-codes': ['invalid-input-secret'] })
    })

    it('a token of site A with the secret of site B: invalid-input-secret', async () => {
      const token = await obtainToken(service.app, browserHeaders(siteA.siteKey))
      const response = await siteverify({ secret: siteB.secretKey, response: token })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({ success: false, 'error-codes': ['invalid-input-secret'], hostname: null, riskScore: null })
      // Site A's backend can still redeem it: B's attempt did not spend it.
      expect((await siteverify({ secret: siteA.secretKey, response: token })).json().success).toBe(true)
    })
  })
})
