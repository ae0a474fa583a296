import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserHeaders, createTestSite, humanSubmission } from '../helpers/core-flow.js'
import { hasPostgres, hasRedis, redisUrl } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

/**
 * Redis holds visitors' and operators' addresses only as keyed tags (docs/risk.md, "History"):
 * `redis-cli --scan` on a production Redis must not list who visited.
 */
describe.runIf(hasPostgres && hasRedis)('client addresses in Redis', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp({ database: 'postgres', keyValue: 'redis', config: { rateLimitPerMinute: 100 } })
  })
  afterAll(() => service.close())

  it('are never in a key or a value: rate limits, history, step-ups, challenges, log-in and sign-up budgets', async () => {
    const site = await createTestSite(service.app)
    const addresses = ['203.0.113.77', '2001:db8:1234:5678::9']
    for (const remoteAddress of addresses) {
      const headers = browserHeaders(site.siteKey)
      const challenge = (await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers, remoteAddress })).json<Challenge>()
      const verified = await service.app.inject({ method: 'POST', url: '/api/v1/verify', headers, remoteAddress, payload: humanSubmission(challenge) })
      expect(verified.statusCode).toBe(200)
      await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: { 'x-site-key': 'tgk_unknown' }, remoteAddress })
      const logIn = await service.app.inject({ method: 'POST', url: '/api/v1/sessions', remoteAddress, payload: { email: 'nobody@example.com', password: 'not the password' } })
      expect(logIn.statusCode).toBe(401)
      await service.app.inject({ method: 'POST', url: '/api/v1/accounts', remoteAddress, payload: { email: `new-${remoteAddress.length}@example.com`, password: 'long enough password' } })
    }

    const redis = new Redis(redisUrl)
    try {
      const keys = await redis.keys(`${service.keyPrefix}*`)
      const values = await Promise.all(keys.map((key) => redis.type(key).then((type) => (type === 'string' ? redis.get(key) : ''))))
      // The rate limits, the history and the challenges were all written.
      expect(keys.some((key) => key.includes('ratelimit:'))).toBe(true)
      expect(keys.some((key) => key.includes('login:'))).toBe(true)
      expect(keys.some((key) => key.includes('signup:'))).toBe(true)
      const stored = [...keys, ...values].join('\n')
      for (const address of ['203.0.113.77', '2001:db8:1234:5678']) expect(stored).not.toContain(address)
    } finally {
      redis.disconnect()
    }
  })
})
