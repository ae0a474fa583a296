import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { testSecrets } from '../../src/domain/siteverify/test-secrets.js'
import { browserHeaders, createTestSite, fetchChallenge, humanSubmission, obtainToken, submitSolution, type TestSite } from '../helpers/core-flow.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

/** A body exactly as fetch() would send it: FormData becomes multipart with its boundary. */
async function multipartOf(fields: Record<string, string> | FormData): Promise<{ payload: Buffer; contentType: string }> {
  const form = fields instanceof FormData ? fields : new FormData()
  if (!(fields instanceof FormData)) for (const [name, value] of Object.entries(fields)) form.append(name, value)
  const request = new Request('http://localhost/', { method: 'POST', body: form })
  return { payload: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type') ?? '' }
}

const answerFields = ['action', 'anomalies', 'cdata', 'challenge_ts', 'countryCode', 'error-codes', 'hostname', 'metadata', 'recommendedAction', 'remoteipMatch', 'riskScore', 'score', 'success']

describe('Siteverify', () => {
  let service: TestApp
  let site: TestSite
  beforeAll(async () => {
    service = await buildTestApp({ config: { rateLimitPerMinute: 0 } })
    site = await createTestSite(service.app)
  })
  afterAll(() => service.close())

  const token = () => obtainToken(service.app, browserHeaders(site.siteKey, 'https://shop.example.com'))
  let baseUrl: string | undefined
  /** The service on a real socket, for what inject() cannot send. */
  const listening = async () => (baseUrl ??= await service.app.listen({ port: 0, host: '127.0.0.1' }))

  /** A success without the page's data: cdata null on Tollgate's path and Google's and hCaptcha's, "" on Turnstile's (as Cloudflare answers). */
  function expectSuccess(response: LightMyRequestResponse, cdata: string | null = null): void {
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^application\/json/)
    const answer = response.json<Record<string, unknown>>()
    expect(Object.keys(answer).sort()).toEqual(answerFields)
    expect(answer).toEqual({
      success: true,
      challenge_ts: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      hostname: 'shop.example.com',
      'error-codes': [],
      action: 'allow',
      recommendedAction: 'allow',
      cdata,
      riskScore: 0,
      score: 1,
      anomalies: [],
      countryCode: 'XX',
      // The site does not check its tokens' addresses: nothing compared, whatever remoteip says.
      remoteipMatch: null,
      // Tollgate's addition, in a success only: the verification's id, for the feedback call.
      metadata: { ephemeral_id: expect.stringMatching(/^[0-9a-f]{24}$/), verification_id: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    })
  }

  it('Turnstile\'s server-side example: multipart FormData with secret, response and remoteip, at /turnstile/v0/siteverify', async () => {
    const { payload, contentType } = await multipartOf({ secret: site.secretKey, response: await token(), remoteip: '203.0.113.7' })
    expectSuccess(await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', headers: { 'content-type': contentType }, payload }), '')
  })

  it('Turnstile\'s JSON variant with an idempotency_key', async () => {
    expectSuccess(
      await service.app.inject({
        method: 'POST',
        url: '/turnstile/v0/siteverify',
        payload: { secret: site.secretKey, response: await token(), idempotency_key: randomUUID() },
      }),
      '',
    )
  })

  it('reCAPTCHA\'s form-urlencoded POST to /recaptcha/api/siteverify, with score in its orientation', async () => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/recaptcha/api/siteverify',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ secret: site.secretKey, response: await token(), remoteip: '203.0.113.7' }).toString(),
    })
    expectSuccess(response)
    expect(response.json().score).toBe(1)
  })

  it('hCaptcha\'s form-urlencoded POST to /siteverify with sitekey', async () => {
    expectSuccess(
      await service.app.inject({
        method: 'POST',
        url: '/siteverify',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ secret: site.secretKey, response: await token(), remoteip: '203.0.113.7', sitekey: site.siteKey }).toString(),
      }),
    )
  })

  it('answers at /api/v1/siteverify with JSON', async () => {
    expectSuccess(await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: await token() } }))
  })

  it("redeems a token once, whatever the path; a failure answers in each path's own words, with no null field on the vendors' paths", async () => {
    const response = await token()
    expect((await service.app.inject({ method: 'POST', url: '/siteverify', payload: { secret: site.secretKey, response } })).json().success).toBe(true)
    // Typed clients written for a vendor (pydantic's `cdata: str = ''`) refuse a null: the vendors answer none.
    const failures: Record<string, unknown> = {
      '/turnstile/v0/siteverify': { success: false, 'error-codes': ['timeout-or-duplicate'], messages: [] },
      '/recaptcha/api/siteverify': { success: false, 'error-codes': ['timeout-or-duplicate'] },
      '/siteverify': { success: false, 'error-codes': ['timeout-or-duplicate'] },
      // Tollgate's own path keeps its documented shape: every field, null where a token's facts would be.
      '/api/v1/siteverify': {
        success: false,
        challenge_ts: null,
        hostname: null,
        'error-codes': ['timeout-or-duplicate'],
        action: null,
        recommendedAction: null,
        cdata: null,
        riskScore: null,
        score: null,
        anomalies: [],
        countryCode: null,
        remoteipMatch: null,
        metadata: { ephemeral_id: null },
      },
    }
    for (const [url, failure] of Object.entries(failures)) {
      const replay = await service.app.inject({ method: 'POST', url, payload: { secret: site.secretKey, response } })
      expect(replay.statusCode).toBe(200)
      expect(replay.body).toBe(JSON.stringify(failure))
    }
  })

  it("answers reCAPTCHA v3's placeholder for a blocked visitor as a failure in each path's words, for every secret, and spends nothing", async () => {
    // What grecaptcha.execute resolves to when the visitor is blocked (sdk/src/compat/blocked-response.ts).
    const placeholder = 'tollgate-blocked:1a2b3c4d-5e6f'
    const shapes: Record<string, string> = {
      '/turnstile/v0/siteverify': '{"success":false,"error-codes":["invalid-input-response"],"messages":[]}',
      '/recaptcha/api/siteverify': '{"success":false,"error-codes":["invalid-input-response"]}',
      '/siteverify': '{"success":false,"error-codes":["invalid-input-response"]}',
    }
    for (const secret of [site.secretKey, testSecrets.alwaysPasses, testSecrets.recaptchaPasses, testSecrets.hcaptchaPasses]) {
      for (const [url, body] of Object.entries(shapes)) {
        expect((await service.app.inject({ method: 'POST', url, payload: { secret, response: placeholder } })).body, `${url} ${secret}`).toBe(body)
      }
      const own = (await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret, response: placeholder } })).json()
      expect(own).toMatchObject({ success: false, 'error-codes': ['invalid-input-response'], score: null, action: null })
    }
    // Google's GET, with the reference unknown (a proxy's request id): still a failure.
    const get = await service.app.inject({ method: 'GET', url: `/recaptcha/api/siteverify?${new URLSearchParams({ secret: site.secretKey, response: 'tollgate-blocked:' }).toString()}` })
    expect(get.body).toBe(shapes['/recaptcha/api/siteverify'])
  })

  it("takes Friendly Captcha v1's solution field as the response at /api/v1/siteverify, its own siteverify path, and only there", async () => {
    // Friendly Captcha v1's server-side call: JSON with solution, secret and sitekey; its clients read success.
    const friendly = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { solution: await token(), secret: site.secretKey, sitekey: site.siteKey } })
    expect(friendly.json()).toMatchObject({ success: true, hostname: 'shop.example.com' })
    const form = await service.app.inject({
      method: 'POST',
      url: '/api/v1/siteverify',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ solution: await token(), secret: site.secretKey }).toString(),
    })
    expect(form.json()).toMatchObject({ success: true })
    // response wins when both are sent; the vendors' paths know no solution.
    const both = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { response: 'not-a-token', solution: await token(), secret: site.secretKey } })
    expect(both.json()).toMatchObject({ success: false, 'error-codes': ['invalid-input-response'] })
    const vendor = await service.app.inject({ method: 'POST', url: '/recaptcha/api/siteverify', payload: { solution: await token(), secret: site.secretKey } })
    expect(vendor.body).toBe('{"success":false,"error-codes":["missing-input-response"]}')
  })

  it("answers an unreadable body and the missing fields in each vendor's failure shape too", async () => {
    const unreadable = { method: 'POST', headers: { 'content-type': 'application/json' }, payload: '{' } as const
    expect((await service.app.inject({ ...unreadable, url: '/turnstile/v0/siteverify' })).body).toBe('{"success":false,"error-codes":["bad-request"],"messages":[]}')
    expect((await service.app.inject({ ...unreadable, url: '/recaptcha/api/siteverify' })).body).toBe('{"success":false,"error-codes":["bad-request"]}')
    const missing = await service.app.inject({ method: 'POST', url: '/siteverify', payload: {} })
    expect(missing.body).toBe('{"success":false,"error-codes":["missing-input-secret","missing-input-response"]}')
  })

  it("answers a success without the page's data with cdata \"\" on Turnstile's path, as Cloudflare does, and null on the others", async () => {
    const cdataAt = async (url: string) =>
      (await service.app.inject({ method: 'POST', url, payload: { secret: site.secretKey, response: await token() } })).json<{ cdata: unknown }>().cdata
    expect(await cdataAt('/turnstile/v0/siteverify')).toBe('')
    for (const url of ['/api/v1/siteverify', '/recaptcha/api/siteverify', '/siteverify']) expect(await cdataAt(url)).toBeNull()
  })

  it("takes JSON null in remoteip, idempotency_key and sitekey as absent (typed clients' Optional[str] = None)", async () => {
    expectSuccess(
      await service.app.inject({
        method: 'POST',
        url: '/turnstile/v0/siteverify',
        payload: { secret: site.secretKey, response: await token(), remoteip: null, idempotency_key: null, sitekey: null },
      }),
      '',
    )
  })

  it('takes JSON null in secret and response as absent: missing-input-*, as from a form without the field, and the query string\'s value applies', async () => {
    const missing = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: null, response: null } })
    expect(missing.json()).toMatchObject({ success: false, 'error-codes': ['missing-input-secret', 'missing-input-response'] })
    const fromQuery = await service.app.inject({
      method: 'POST',
      url: `/api/v1/siteverify?${new URLSearchParams({ response: await token() }).toString()}`,
      payload: { secret: site.secretKey, response: null },
    })
    expectSuccess(fromQuery)
  })

  it('takes reCAPTCHA\'s fields from the query string of the POST too; a field in the body wins', async () => {
    const response = await token()
    const query = new URLSearchParams({ secret: site.secretKey, response }).toString()
    const answer = await service.app.inject({ method: 'POST', url: `/recaptcha/api/siteverify?${query}` })
    expect(answer.json()).toMatchObject({ success: true, 'error-codes': [] })
    const another = await token()
    const overridden = await service.app.inject({
      method: 'POST',
      url: `/recaptcha/api/siteverify?${new URLSearchParams({ secret: 'tgs_wrong', response: another }).toString()}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ secret: site.secretKey }).toString(),
    })
    expect(overridden.json()).toMatchObject({ success: true })
  })

  it.each(['application/json', 'application/json; charset=utf-8', 'multipart/form-data; boundary=x', 'text/plain'])(
    'takes the query string\'s fields when the body is empty, whatever its Content-Type (%s)',
    async (contentType) => {
      const query = new URLSearchParams({ secret: site.secretKey, response: await token() }).toString()
      const answer = await service.app.inject({ method: 'POST', url: `/recaptcha/api/siteverify?${query}`, headers: { 'content-type': contentType }, payload: '' })
      expect(answer.json()).toMatchObject({ success: true, 'error-codes': [] })
    },
  )

  it.each(['application/json', 'multipart/form-data; boundary=x', 'text/plain', 'application/octet-stream', undefined])(
    'takes the query string\'s fields when a body sent chunked turns out empty (%s)',
    async (contentType) => {
      const query = new URLSearchParams({ secret: site.secretKey, response: await token() }).toString()
      // A stream of no bytes: sent chunked, without a Content-Length.
      const body = new ReadableStream({ start: (controller) => controller.close() })
      const answer = await fetch(`${await listening()}/recaptcha/api/siteverify?${query}`, {
        method: 'POST',
        headers: contentType === undefined ? {} : { 'content-type': contentType },
        body,
        duplex: 'half',
      } as RequestInit)
      expect(await answer.json()).toMatchObject({ success: true, 'error-codes': [] })
    },
  )

  it("answers a GET with the fields in the query string, as Google's server does (PHP's file_get_contents, axios.get)", async () => {
    const query = new URLSearchParams({ secret: site.secretKey, response: await token() }).toString()
    expectSuccess(await service.app.inject({ method: 'GET', url: `/recaptcha/api/siteverify?${query}` }))
    const again = await service.app.inject({ method: 'GET', url: `/recaptcha/api/siteverify?${query}` })
    expect(again.json()).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    const empty = await service.app.inject({ method: 'GET', url: '/recaptcha/api/siteverify' })
    expect(empty.json()).toMatchObject({ success: false, 'error-codes': ['missing-input-secret', 'missing-input-response'] })
  })

  it('does not redeem on a HEAD (a link checker or prober would spend the token and show nobody the answer)', async () => {
    const query = new URLSearchParams({ secret: site.secretKey, response: await token() }).toString()
    const head = await service.app.inject({ method: 'HEAD', url: `/recaptcha/api/siteverify?${query}` })
    expect({ status: head.statusCode, allow: head.headers.allow }).toEqual({ status: 405, allow: 'POST, GET' })
    expectSuccess(await service.app.inject({ method: 'GET', url: `/recaptcha/api/siteverify?${query}` }))
  })

  it("answers the page's action name as action and its data as cdata, as Turnstile and reCAPTCHA v3 backends check them; the recommendation stays in recommendedAction", async () => {
    const headers = browserHeaders(site.siteKey, 'https://shop.example.com')
    const challenge = await fetchChallenge(service.app, headers)
    const verdict = await submitSolution(service.app, headers, { ...humanSubmission(challenge), pageAction: 'signup', cData: 'session-42_a' })
    const tokenWithAction = verdict.json<{ token: string }>().token
    const answer = await service.app.inject({ method: 'POST', url: '/recaptcha/api/siteverify', payload: { secret: site.secretKey, response: tokenWithAction } })
    expect(answer.json()).toMatchObject({ success: true, action: 'signup', recommendedAction: 'allow', cdata: 'session-42_a', hostname: 'shop.example.com' })
    // The log keeps the page's action, for the dashboard's "Top page actions" and its log.
    await service.app.verificationLog.flush()
    const rows = await service.app.database.query<{ page_action: string | null }>('SELECT page_action FROM verifications WHERE challenge_id = $1', [challenge.challengeId])
    expect(rows).toEqual([{ page_action: 'signup' }])
  })

  it.each([
    [{ pageAction: '' }, 'pageAction'],
    [{ pageAction: 'a'.repeat(33) }, 'pageAction'],
    [{ pageAction: 'sign up' }, 'pageAction'],
    [{ cData: 'x'.repeat(256) }, 'cData'],
    [{ cData: 'a=b' }, 'cData'],
  ])('refuses a page action or data Turnstile would refuse (%j): 400 validation_error on %s, no token', async (extra, field) => {
    const headers = browserHeaders(site.siteKey, 'https://shop.example.com')
    const challenge = await fetchChallenge(service.app, headers)
    const verdict = await submitSolution(service.app, headers, { ...humanSubmission(challenge), ...extra })
    expect(verdict.statusCode).toBe(400)
    expect(verdict.json().error.code).toBe('validation_error')
    expect(JSON.stringify(verdict.json().error.details)).toContain(field)
  })

  it('gives a retry with the same idempotency_key the first answer again', async () => {
    const response = await token()
    const idempotencyKey = randomUUID()
    const first = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload: { secret: site.secretKey, response, idempotency_key: idempotencyKey } })
    const retry = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload: { secret: site.secretKey, response, idempotency_key: idempotencyKey } })
    expect(first.json().success).toBe(true)
    expect(retry.json()).toEqual(first.json())
    const other = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload: { secret: site.secretKey, response, idempotency_key: randomUUID() } })
    expect(other.json()['error-codes']).toEqual(['timeout-or-duplicate'])
  })

  it('replays only a redemption to its idempotency_key: a refused call is not stored and spends nothing, and an empty key is no key', async () => {
    const verify = (payload: Record<string, string>) => service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload })
    // The score may carry high_request_rate by now (this file asks many challenges from one address).
    const expectSuccess = (answer: LightMyRequestResponse) => expect(answer.json()).toMatchObject({ success: true, 'error-codes': [] })
    const response = await token()
    const idempotencyKey = randomUUID()
    // A wrong secret, then another site's key, with the key: neither spends the token nor is replayed.
    const other = await createTestSite(service.app)
    expect((await verify({ secret: other.secretKey, response, idempotency_key: idempotencyKey })).json()['error-codes']).toEqual(['invalid-input-secret'])
    expect((await verify({ secret: site.secretKey, response, sitekey: other.siteKey, idempotency_key: idempotencyKey })).json()['error-codes']).toEqual(['invalid-input-response'])
    const redeemed = await verify({ secret: site.secretKey, response, idempotency_key: idempotencyKey })
    expectSuccess(redeemed)
    expect((await verify({ secret: site.secretKey, response, idempotency_key: idempotencyKey })).json()).toEqual(redeemed.json())
    // The key is the token's: the same key on another token is a first redemption of that token.
    expectSuccess(await verify({ secret: site.secretKey, response: await token(), idempotency_key: idempotencyKey }))
    // A redemption with an empty key cannot be retried with it.
    const unkeyed = await token()
    expectSuccess(await verify({ secret: site.secretKey, response: unkeyed, idempotency_key: '' }))
    expect((await verify({ secret: site.secretKey, response: unkeyed, idempotency_key: '' })).json()['error-codes']).toEqual(['timeout-or-duplicate'])
    // A test secret ignores sitekey, a wrong one included.
    expect((await verify({ secret: testSecrets.alwaysPasses, response: await token(), sitekey: other.siteKey })).json()).toMatchObject({ success: true })
  })

  it.each([
    [testSecrets.alwaysPasses, true, []],
    [testSecrets.recaptchaPasses, true, []],
    [testSecrets.hcaptchaPasses, true, []],
    [testSecrets.alwaysFails, false, ['invalid-input-response']],
    [testSecrets.alwaysDuplicate, false, ['timeout-or-duplicate']],
  ])('test secret %s always answers success=%s %j', async (secret, success, codes) => {
    for (let round = 0; round < 2; round++) {
      const { payload, contentType } = await multipartOf({ secret, response: 'XXXX.DUMMY.TOKEN.XXXX' })
      const response = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', headers: { 'content-type': contentType }, payload })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({ success, 'error-codes': codes })
    }
  })

  it.each([
    ['/recaptcha/api/siteverify', testSecrets.recaptchaPasses, 'testkey.google.com'],
    ['/siteverify', testSecrets.hcaptchaPasses, 'dummy-key-pass'],
    ['/turnstile/v0/siteverify', testSecrets.alwaysPasses, 'example.com'],
  ])("%s with its vendor's test secret %s answers the vendor's dummy hostname %s, which backend libraries accept for that secret", async (url, secret, hostname) => {
    const response = await service.app.inject({ method: 'POST', url, payload: { secret, response: 'XXXX.DUMMY.TOKEN.XXXX' } })
    expect(response.json()).toMatchObject({ success: true, hostname })
  })

  it.each([
    [{}, ['missing-input-secret', 'missing-input-response']],
    [{ response: 'v1.abc.def' }, ['missing-input-secret']],
    [{ secret: 'tgs_x' }, ['missing-input-response']],
    [{ secret: 'tgs_x', response: 'not a token' }, ['invalid-input-response']],
  ])('fields %j answer %j', async (payload, codes) => {
    const response = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ success: false, 'error-codes': codes })
  })

  it('a POST without any body answers missing-input-secret and missing-input-response', async () => {
    const response = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify' })
    expect(response.statusCode).toBe(200)
    expect(response.json()['error-codes']).toEqual(['missing-input-secret', 'missing-input-response'])
  })

  it.each([
    ['malformed JSON', { 'content-type': 'application/json' }, '{"secret":'],
    ['an unsupported content type', { 'content-type': 'text/xml' }, '<secret/>'],
    ['a secret that is an object', { 'content-type': 'application/json' }, '{"secret":{"a":1},"response":"x"}'],
    // Nothing is converted: true is not "true", ["x"] is not "x" (null is the field absent).
    ['a secret that is true', { 'content-type': 'application/json' }, '{"secret":true,"response":"x"}'],
    ['a remoteip that is a number', { 'content-type': 'application/json' }, '{"secret":"tgs_x","response":"x","remoteip":42}'],
    ['a secret in an array', { 'content-type': 'application/json' }, '{"secret":["tgs_x"],"response":"x"}'],
    ['a secret sent twice in a form', { 'content-type': 'application/x-www-form-urlencoded' }, 'secret=tgs_x&secret=tgs_y&response=x'],
    ['a body over 16 KiB', { 'content-type': 'application/json' }, JSON.stringify({ secret: 'x'.repeat(20_000), response: 'y' })],
  ])('%s answers 200 bad-request', async (_case, headers, payload) => {
    const response = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', headers, payload })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ success: false, 'error-codes': ['bad-request'] })
  })

  it('a multipart file instead of fields answers 200 bad-request', async () => {
    const form = new FormData()
    form.append('secret', site.secretKey)
    form.append('response', new Blob(['v1.x.y']), 'token.txt')
    const { payload, contentType } = await multipartOf(form)
    const response = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', headers: { 'content-type': contentType }, payload })
    expect(response.statusCode).toBe(200)
    expect(response.json()['error-codes']).toEqual(['bad-request'])
  })

  it.each([
    ['more than 20 fields', Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`field${index}`, 'x']))],
    ['a field over 4 KiB', { secret: 'x'.repeat(5_000), response: 'y' }],
  ])('multipart with %s answers 200 bad-request', async (_case, fields) => {
    const { payload, contentType } = await multipartOf(fields)
    const response = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', headers: { 'content-type': contentType }, payload })
    expect(response.statusCode).toBe(200)
    expect(response.json()['error-codes']).toEqual(['bad-request'])
  })

  it('multipart with a field sent twice answers 200 bad-request, as a form does, and spends nothing', async () => {
    const response = await token()
    const form = new FormData()
    form.append('secret', 'tgs_wrong')
    form.append('secret', site.secretKey)
    form.append('response', response)
    const { payload, contentType } = await multipartOf(form)
    const answer = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', headers: { 'content-type': contentType }, payload })
    expect(answer.json()['error-codes']).toEqual(['bad-request'])
    const redeemed = await service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload: { secret: site.secretKey, response } })
    expect(redeemed.json()).toMatchObject({ success: true })
  })

  it('a JSON Content-Type without a body answers the missing fields, as a POST without either does', async () => {
    for (const headers of [{ 'content-type': 'application/json' }, {}]) {
      const response = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', headers })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({ success: false, 'error-codes': ['missing-input-secret', 'missing-input-response'] })
    }
  })

  it('multipart without a boundary answers 200 bad-request', async () => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/turnstile/v0/siteverify',
      headers: { 'content-type': 'multipart/form-data' },
      payload: 'secret=x',
    })
    expect(response.statusCode).toBe(200)
    expect(response.json()['error-codes']).toEqual(['bad-request'])
  })

  it('refuses a token after its 300 s as timeout-or-duplicate', async () => {
    const response = await token()
    // Tokens are stamped and judged by the store's clock.
    const storeClock = vi.spyOn(service.app.keyValue, 'now').mockReturnValue(Date.now() + 300_001)
    try {
      const answer = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response } })
      expect(answer.json()).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    } finally {
      storeClock.mockRestore()
    }
  })

  it('refuses the old secret once it is rotated', async () => {
    const response = await token()
    const newSecret = await service.app.sites.rotateSecret(site.site.id)
    await service.app.siteCache.invalidate(site.site)
    expect((await service.app.inject({ method: 'POST', url: '/siteverify', payload: { secret: site.secretKey, response } })).json()['error-codes']).toEqual([
      'invalid-input-secret',
    ])
    expect((await service.app.inject({ method: 'POST', url: '/siteverify', payload: { secret: newSecret, response } })).json().success).toBe(true)
    site = { ...site, secretKey: newSecret ?? '' }
  })
})
