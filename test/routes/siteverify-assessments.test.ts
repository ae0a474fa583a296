import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { testSecrets } from '../../src/domain/siteverify/test-secrets.js'
import { browserHeaders, createTestSite, fetchChallenge, humanSubmission, obtainToken, submitSolution, type TestSite } from '../helpers/core-flow.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

interface Assessment {
  name: string
  event: Record<string, string>
  riskAnalysis: { score: number; reasons: string[] }
  tokenProperties: { valid: boolean; invalidReason: string; hostname: string; action: string; createTime?: string }
}

describe.each(deployments)("reCAPTCHA Enterprise's createAssessment on $name", ({ available, options }) => {
  let service: TestApp
  let site: TestSite
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, config: { rateLimitPerMinute: 0 } })
    site = await createTestSite(service.app)
  })
  afterAll(() => service?.close())

  const token = () => obtainToken(service.app, browserHeaders(site.siteKey, 'https://shop.example.com'))
  /** Google's REST call, as its docs show it: the key in the query string, the event in a JSON body. */
  const assess = (event: Record<string, string>, key: string = site.secretKey, headers: Record<string, string> = {}) =>
    service.app.inject({ method: 'POST', url: `/v1/projects/my-proj/assessments${key === '' ? '' : `?key=${encodeURIComponent(key)}`}`, headers, payload: { event } })

  it.skipIf(!available)('answers a valid token with Google\'s Assessment: valid, score, hostname, action, createTime, the event echoed', async () => {
    const event = { token: await token(), siteKey: site.siteKey, expectedAction: 'allow', userIpAddress: '203.0.113.7', userAgent: 'Mozilla/5.0' }
    const answer = await assess(event)
    expect(answer.statusCode).toBe(200)
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.json()).toEqual({
      name: expect.stringMatching(/^projects\/my-proj\/assessments\/[0-9a-f-]{36}$/),
      event,
      riskAnalysis: { score: 1, reasons: [] },
      tokenProperties: {
        valid: true,
        invalidReason: 'INVALID_REASON_UNSPECIFIED',
        hostname: 'shop.example.com',
        action: 'allow',
        createTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      },
    })
  })

  it.skipIf(!available)('redeems the token once: a reuse is valid false, DUPE, with score 0, also after a Siteverify of it', async () => {
    const response = await token()
    expect((await assess({ token: response })).json<Assessment>().tokenProperties.valid).toBe(true)
    const again = await assess({ token: response })
    expect(again.statusCode).toBe(200)
    expect(again.json<Assessment>()).toMatchObject({ riskAnalysis: { score: 0 }, tokenProperties: { valid: false, invalidReason: 'DUPE', hostname: '', action: '' } })
    expect(again.json<Assessment>().tokenProperties).not.toHaveProperty('createTime')
    // The same single use as Siteverify's, whichever path redeems first.
    const other = await token()
    await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: other } })
    expect((await assess({ token: other })).json<Assessment>().tokenProperties.invalidReason).toBe('DUPE')
  })

  it.skipIf(!available)("answers reCAPTCHA v3's placeholder for a blocked visitor as an invalid token with score 0", async () => {
    const answer = await assess({ token: 'tollgate-blocked:1a2b3c4d-5e6f', siteKey: site.siteKey })
    expect(answer.statusCode).toBe(200)
    expect(answer.json<Assessment>()).toMatchObject({ riskAnalysis: { score: 0 }, tokenProperties: { valid: false, invalidReason: 'MALFORMED' } })
  })

  it.skipIf(!available)("takes the key in Google's X-Goog-Api-Key header (its client libraries) or as a bearer token too", async () => {
    const headerSets: Record<string, string>[] = [{ 'x-goog-api-key': site.secretKey }, { authorization: `Bearer ${site.secretKey}` }]
    for (const headers of headerSets) {
      const answer = await assess({ token: await token() }, '', headers)
      expect(answer.json<Assessment>().tokenProperties.valid).toBe(true)
    }
  })

  it.skipIf(!available)("refuses a wrong key with Google's 400 INVALID_ARGUMENT and a missing one with 403 PERMISSION_DENIED, and does not spend the token", async () => {
    const response = await token()
    const wrong = await assess({ token: response }, 'tgs_not-this-sites-secret')
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json()).toEqual({ error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' } })
    const missing = await assess({ token: response }, '')
    expect(missing.statusCode).toBe(403)
    expect(missing.json()).toEqual({ error: { code: 403, message: 'The request is missing a valid API key.', status: 'PERMISSION_DENIED' } })
    expect((await assess({ token: response })).json<Assessment>().tokenProperties.valid).toBe(true)
  })

  it.skipIf(!available)('checks the key of a call without a token before answering MISSING', async () => {
    const wrong = await assess({}, 'tgs_not-this-sites-secret')
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json()).toMatchObject({ error: { status: 'INVALID_ARGUMENT' } })
    for (const key of [site.secretKey, testSecrets.alwaysPasses]) {
      expect((await assess({ token: '' }, key)).json<Assessment>().tokenProperties.invalidReason).toBe('MISSING')
    }
  })

  it.skipIf(!available)('takes the first key that is not empty: an empty ?key= does not hide the header', async () => {
    const answer = await service.app.inject({
      method: 'POST',
      url: '/v1/projects/my-proj/assessments?key=',
      headers: { 'x-goog-api-key': site.secretKey },
      payload: { event: { token: await token() } },
    })
    expect(answer.json<Assessment>().tokenProperties.valid).toBe(true)
  })

  it.skipIf(!available)("does not fail an expectedAction that is not the token's, as Google: the backend compares tokenProperties.action", async () => {
    const headers = browserHeaders(site.siteKey, 'https://shop.example.com')
    const challenge = await fetchChallenge(service.app, headers)
    const verdict = await submitSolution(service.app, headers, { ...humanSubmission(challenge), pageAction: 'signup' })
    const answer = await assess({ token: verdict.json<{ token: string }>().token, expectedAction: 'login' })
    expect(answer.json()).toMatchObject({ event: { expectedAction: 'login' }, tokenProperties: { valid: true, action: 'signup' } })
  })

  it.skipIf(!available)('names why a token is not valid: MISSING, MALFORMED, EXPIRED, and another siteKey UNKNOWN_INVALID_REASON (v1 has no SITE_MISMATCH)', async () => {
    const reasonOf = async (event: Record<string, string>) => (await assess(event)).json<Assessment>().tokenProperties.invalidReason
    expect(await reasonOf({})).toBe('MISSING')
    expect(await reasonOf({ token: 'v1.forged.token' })).toBe('MALFORMED')
    const response = await token()
    expect(await reasonOf({ token: response, siteKey: 'tgk_another' })).toBe('UNKNOWN_INVALID_REASON')
    // Tokens are stamped and judged by the store's clock.
    const storeClock = vi.spyOn(service.app.keyValue, 'now').mockReturnValue(Date.now() + 300_001)
    try {
      expect(await reasonOf({ token: response })).toBe('EXPIRED')
    } finally {
      storeClock.mockRestore()
    }
  })

  it.skipIf(!available)("answers the test secrets as Siteverify does: 1x… valid, 2x… MALFORMED, 3x… DUPE", async () => {
    const validOf = async (key: string) => (await assess({ token: 'anything' }, key)).json<Assessment>().tokenProperties
    expect(await validOf(testSecrets.alwaysPasses)).toMatchObject({ valid: true, hostname: 'example.com' })
    expect(await validOf(testSecrets.alwaysFails)).toMatchObject({ valid: false, invalidReason: 'MALFORMED' })
    expect(await validOf(testSecrets.alwaysDuplicate)).toMatchObject({ valid: false, invalidReason: 'DUPE' })
  })

  it.skipIf(!available)("answers a body without an event, or unreadable, with Google's 400 INVALID_ARGUMENT", async () => {
    for (const payload of [{}, '{']) {
      const answer = await service.app.inject({
        method: 'POST',
        url: `/v1/projects/my-proj/assessments?key=${site.secretKey}`,
        headers: { 'content-type': 'application/json' },
        payload,
      })
      expect(answer.statusCode).toBe(400)
      expect(answer.json()).toEqual({ error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' } })
    }
  })

  it.skipIf(!available)('documents the longest project the router lets through, and takes a project that long', async () => {
    const { paths } = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, { post?: { parameters?: { name: string; in: string; schema: { maxLength?: number } }[] } }>
    }>()
    const project = paths['/v1/projects/{project}/assessments']?.post?.parameters?.find((parameter) => parameter.in === 'path' && parameter.name === 'project')
    expect(project?.schema.maxLength).toBe(100)
    for (const [length, status] of [[100, 200], [101, 400]] as const) {
      const answer = await service.app.inject({
        method: 'POST',
        url: `/v1/projects/${'p'.repeat(length)}/assessments?key=${site.secretKey}`,
        payload: { event: { token: await token() } },
      })
      expect(answer.statusCode, String(length)).toBe(status)
    }
  })

  it.skipIf(!available)("answers a project the router refuses (longer than any id, or not decoding) with Google's 400 INVALID_ARGUMENT too", async () => {
    for (const project of ['x'.repeat(120), '%E0%A4%A']) {
      const answer = await service.app.inject({
        method: 'POST',
        url: `/v1/projects/${project}/assessments?key=${site.secretKey}`,
        payload: { event: { token: await token() } },
      })
      expect(answer.statusCode, project).toBe(400)
      expect(answer.json()).toEqual({ error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' } })
    }
  })
})
