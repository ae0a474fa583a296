import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserHeaders, createTestSite, fetchChallenge, humanSubmission, submitSolution, type TestSite } from '../helpers/core-flow.js'
import { hasPostgres, hasRedis } from '../helpers/services.js'
import { buildSharedInstances, type SharedInstances } from '../helpers/shared-instances.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

const SUBMISSIONS = 24

describe.skipIf(!hasPostgres || !hasRedis)('one valid solution submitted concurrently (real PostgreSQL and Redis)', () => {
  let service: TestApp
  let site: TestSite
  beforeAll(async () => {
    service = await buildTestApp({ database: 'postgres', keyValue: 'redis', config: { rateLimitPerMinute: 0 } })
    site = await createTestSite(service.app)
  })
  afterAll(() => service.close())

  it('gets exactly one token; every other submission is challenge_invalid', async () => {
    const headers = browserHeaders(site.siteKey)
    const submission = humanSubmission(await fetchChallenge(service.app, headers))
    const responses = await Promise.all(Array.from({ length: SUBMISSIONS }, () => submitSolution(service.app, headers, submission)))
    const winners = responses.filter((response) => response.statusCode === 200)
    expect(winners).toHaveLength(1)
    expect(winners[0]?.json().token).toEqual(expect.any(String))
    const losers = responses.filter((response) => response.statusCode !== 200)
    expect(losers.map((response) => [response.statusCode, response.json<{ error: { code: string } }>().error.code])).toEqual(
      Array.from({ length: SUBMISSIONS - 1 }, () => [400, 'challenge_invalid']),
    )
  })
})

describe.skipIf(!hasPostgres || !hasRedis)('one valid solution submitted to several instances at once', () => {
  let shared: SharedInstances
  let site: TestSite
  beforeAll(async () => {
    shared = await buildSharedInstances(3)
    site = await createTestSite(instanceAt(0))
  })
  afterAll(() => shared.close())

  const instanceAt = (index: number) => {
    const instance = shared.instances[index % shared.instances.length]
    if (instance === undefined) throw new Error('no instances')
    return instance
  }

  it('gets exactly one token across instances sharing Redis', async () => {
    const headers = browserHeaders(site.siteKey)
    const submission = humanSubmission(await fetchChallenge(instanceAt(0), headers))
    const responses = await Promise.all(Array.from({ length: SUBMISSIONS }, (_, index) => submitSolution(instanceAt(index), headers, submission)))
    expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(1)
    expect(responses.filter((response) => response.statusCode === 400)).toHaveLength(SUBMISSIONS - 1)
  })
})
