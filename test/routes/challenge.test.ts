import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { challengeKey, EXPIRED_CHALLENGE_GRACE_MS } from '../../src/domain/challenge/challenge-keys.js'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserHeaders, createTestSite, requestChallenge, type TestSite } from '../helpers/core-flow.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'

describe('POST /api/v1/challenge', () => {
  let service: TestApp
  let site: TestSite
  beforeAll(async () => {
    service = await buildTestApp({ config: { rateLimitPerMinute: 0 } })
    site = await createTestSite(service.app, { settings: { difficulty: 18, challengeLifetimeSeconds: 90 } })
  })
  afterAll(() => service.close())

  it('answers the spec\'s Challenge object, exactly its fields and formats', async () => {
    const before = Date.now()
    const response = await requestChallenge(service.app, browserHeaders(site.siteKey))
    const after = Date.now()
    expect(response.statusCode).toBe(200)
    expect(response.headers['cache-control']).toBe('no-store')
    const challenge = response.json<Challenge>()
    expect(Object.keys(challenge).sort()).toEqual(['algorithm', 'challenge', 'challengeId', 'difficulty', 'expiresAt', 'mode'])
    expect(challenge).toEqual({
      challengeId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      challenge: expect.stringMatching(/^[0-9a-f]{64}$/),
      difficulty: 18,
      mode: 'invisible',
      algorithm: 'SHA-256',
      expiresAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    })
    // 90 s from the moment of issue, somewhere inside the request however long a busy host makes it.
    const expiresAt = Date.parse(challenge.expiresAt)
    expect(expiresAt).toBeGreaterThanOrEqual(before + 90_000)
    expect(expiresAt).toBeLessThanOrEqual(after + 90_000)
  })

  it('keeps the challenge in the key-value store until shortly after it expires', async () => {
    const challenge = (await requestChallenge(service.app, browserHeaders(site.siteKey))).json<Challenge>()
    const ttl = await service.app.keyValue.timeToLive(challengeKey(challenge.challengeId))
    expect(ttl).toBeGreaterThan(90_000 + EXPIRED_CHALLENGE_GRACE_MS - 2_000)
    expect(ttl).toBeLessThanOrEqual(90_000 + EXPIRED_CHALLENGE_GRACE_MS)
  })

  it('issues a different challenge every time', async () => {
    const [first, second] = await Promise.all([1, 2].map(async () => (await requestChallenge(service.app, browserHeaders(site.siteKey))).json<Challenge>()))
    expect(first?.challengeId).not.toBe(second?.challengeId)
    expect(first?.challenge).not.toBe(second?.challenge)
  })

  it('ignores a body (the SDK may send an empty JSON object)', async () => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/api/v1/challenge',
      headers: { ...browserHeaders(site.siteKey), 'content-type': 'application/json' },
      payload: '{}',
    })
    expect(response.statusCode).toBe(200)
  })

  it('answers 401 invalid_site_key without X-Site-Key', async () => {
    const { 'x-site-key': _omitted, ...headers } = browserHeaders(site.siteKey)
    const response = await requestChallenge(service.app, headers)
    expect(response.statusCode).toBe(401)
    expect(response.json().error).toMatchObject({ code: 'invalid_site_key', requestId: response.headers['x-request-id'] })
  })

  it('answers 401 invalid_site_key for an unknown site key', async () => {
    const response = await requestChallenge(service.app, browserHeaders('tgk_unknownunknownunknown1'))
    expect(response.statusCode).toBe(401)
    expect(response.json().error.code).toBe('invalid_site_key')
  })
})

describe('the public gate', () => {
  let service: TestApp
  let open: TestSite
  let restricted: TestSite
  beforeAll(async () => {
    service = await buildTestApp({ config: { rateLimitPerMinute: 10 } })
    open = await createTestSite(service.app)
    restricted = await createTestSite(service.app, { domains: ['example.com', 'shop.test'] })
  })
  afterAll(() => service.close())

  it('answers a CORS preflight for the SDK\'s headers', async () => {
    for (const url of ['/api/v1/challenge', '/api/v1/verify']) {
      const response = await service.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: 'https://www.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-site-key' },
      })
      expect(response.statusCode).toBe(204)
      expect(response.headers['access-control-allow-origin']).toBe('https://www.example.com')
      expect(response.headers['access-control-allow-methods']).toContain('POST')
      expect(String(response.headers['access-control-allow-headers']).toLowerCase()).toContain('x-site-key')
    }
  })

  it('lets a registered domain and its subdomains in, with CORS headers', async () => {
    for (const origin of ['https://example.com', 'https://www.example.com', 'http://shop.test:8080']) {
      const response = await requestChallenge(service.app, browserHeaders(restricted.siteKey, origin))
      expect(response.statusCode, origin).toBe(200)
      expect(response.headers['access-control-allow-origin']).toBe(origin)
      expect(response.headers.vary).toContain('Origin')
    }
  })

  it('answers 403 origin_not_allowed for another origin, by Origin or by Referer', async () => {
    const byOrigin = await requestChallenge(service.app, browserHeaders(restricted.siteKey, 'https://evil-example.com'))
    expect(byOrigin.statusCode).toBe(403)
    expect(byOrigin.json().error.code).toBe('origin_not_allowed')
    const { origin: _origin, ...headers } = browserHeaders(restricted.siteKey)
    const byReferer = await requestChallenge(service.app, { ...headers, referer: 'https://attacker.test/page' })
    expect(byReferer.statusCode).toBe(403)
    expect(byReferer.json().error.code).toBe('origin_not_allowed')
  })

  it('answers 403 origin_not_allowed for Origin: null, whatever the Referer says', async () => {
    const response = await requestChallenge(service.app, { ...browserHeaders(restricted.siteKey, 'null'), referer: 'https://www.example.com/signup' })
    expect(response.statusCode).toBe(403)
    expect(response.json().error.code).toBe('origin_not_allowed')
  })

  it('serves a request with neither Origin nor Referer (it is scored instead)', async () => {
    const { origin: _origin, ...headers } = browserHeaders(restricted.siteKey)
    expect((await requestChallenge(service.app, headers)).statusCode).toBe(200)
  })

  it('lets any origin use a site without domains', async () => {
    expect((await requestChallenge(service.app, browserHeaders(open.siteKey, 'https://anything.example'))).statusCode).toBe(200)
  })

  it('answers 429 rate_limited with Retry-After once a client exceeds the limit', async () => {
    await startWithinOneWindow(60_000)
    const site = await createTestSite(service.app)
    const headers = browserHeaders(site.siteKey)
    const statuses = []
    for (let attempt = 0; attempt < 11; attempt++) statuses.push((await requestChallenge(service.app, headers)).statusCode)
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429])
    const limited = await requestChallenge(service.app, headers)
    expect(limited.statusCode).toBe(429)
    expect(limited.json().error.code).toBe('rate_limited')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60)
    // The limit is per site: another site's budget is untouched.
    expect((await requestChallenge(service.app, browserHeaders(open.siteKey))).statusCode).toBe(200)
  })

  it('counts an IPv6 client by its /64, so rotating addresses within it does not reset the budget', async () => {
    const site = await createTestSite(service.app)
    const fromAddress = (remoteAddress: string) => service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey), remoteAddress })
    const statuses = []
    for (let host = 1; host <= 11; host++) statuses.push((await fromAddress(`2001:db8:5:6::${host.toString(16)}`)).statusCode)
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429])
    expect((await fromAddress('2001:db8:5:7::1')).statusCode).toBe(200)
  })

  it('turns away a client that sends made-up site keys once it has used a minute of lookups, before the database', async () => {
    const remoteAddress = '203.0.113.50'
    const query = vi.spyOn(service.app.database, 'query')
    const lookups = () => query.mock.calls.filter(([sql]) => sql.includes('site_key =')).length
    const statuses = []
    for (let attempt = 0; attempt < 14; attempt++) {
      const headers = browserHeaders(`tgk_made-up-${attempt}`)
      statuses.push((await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers, remoteAddress })).statusCode)
    }
    expect(statuses).toEqual([...Array<number>(10).fill(401), ...Array<number>(4).fill(429)])
    expect(lookups()).toBe(10)
    query.mockRestore()
    // Another client is not affected, and neither is a site the cache knows.
    expect((await requestChallenge(service.app, browserHeaders(open.siteKey))).statusCode).toBe(200)
    await service.app.siteCache.findBySiteKey(open.siteKey)
    const known = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(open.siteKey), remoteAddress })
    expect(known.statusCode).toBe(200)
  })

  it('keeps site keys and site ids apart: a key written like an id entry does not hide the site', async () => {
    const response = await requestChallenge(service.app, browserHeaders(`id:${open.site.id}`))
    expect(response.statusCode).toBe(401)
    expect((await service.app.siteCache.findById(open.site.id))?.siteKey).toBe(open.siteKey)
  })
})
