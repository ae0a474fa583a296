import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { browserHeaders, createTestSite, obtainToken, type TestSite } from '../helpers/core-flow.js'
import { hasPostgres, hasRedis } from '../helpers/services.js'
import { buildSharedInstances, type SharedInstances } from '../helpers/shared-instances.js'

describe.skipIf(!hasPostgres || !hasRedis)('Siteverify across instances sharing PostgreSQL and Redis', () => {
  let shared: SharedInstances
  let first: App
  let second: App
  let site: TestSite
  beforeAll(async () => {
    shared = await buildSharedInstances(2)
    ;[first, second] = shared.instances as [App, App]
    site = await createTestSite(first)
  })
  afterAll(() => shared.close())

  const siteverify = (app: App, payload: Record<string, string>) => app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload })

  it('a token issued by one instance redeems once at any instance', async () => {
    const response = await obtainToken(first, browserHeaders(site.siteKey))
    expect((await siteverify(second, { secret: site.secretKey, response })).json().success).toBe(true)
    expect((await siteverify(first, { secret: site.secretKey, response })).json()['error-codes']).toEqual(['timeout-or-duplicate'])
    expect((await siteverify(second, { secret: site.secretKey, response })).json()['error-codes']).toEqual(['timeout-or-duplicate'])
  })

  it('concurrent redemptions at two instances: exactly one succeeds', async () => {
    const response = await obtainToken(first, browserHeaders(site.siteKey))
    const answers = await Promise.all(Array.from({ length: 10 }, (_, index) => siteverify(index % 2 === 0 ? first : second, { secret: site.secretKey, response })))
    expect(answers.filter((answer) => answer.json().success === true)).toHaveLength(1)
  })

  it('an idempotent retry at the other instance gets the first answer', async () => {
    const response = await obtainToken(first, browserHeaders(site.siteKey))
    const idempotencyKey = randomUUID()
    const answer = await siteverify(first, { secret: site.secretKey, response, idempotency_key: idempotencyKey })
    const retry = await siteverify(second, { secret: site.secretKey, response, idempotency_key: idempotencyKey })
    expect(answer.json().success).toBe(true)
    expect(retry.json()).toEqual(answer.json())
  })
})
