import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserHeaders, createTestSite, fetchChallenge, humanSubmission, obtainToken, submitSolution, type TestSite } from '../helpers/core-flow.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

/** The value of one sample of /metrics, 0 when the series does not exist yet. */
function sampleOf(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

describe('/metrics counters of the core flow', () => {
  let service: TestApp
  let site: TestSite
  beforeAll(async () => {
    service = await buildTestApp({ config: { rateLimitPerMinute: 0 } })
    site = await createTestSite(service.app)
  })
  afterAll(() => service.close())

  const metrics = async () => (await service.app.inject({ method: 'GET', url: '/metrics' })).body

  it('count challenges issued and refused, verifications by action, rejections by code and Siteverify by result', async () => {
    const series = [
      'tollgate_challenges_issued_total',
      'tollgate_challenges_rejected_total{code="invalid_site_key"}',
      'tollgate_challenges_rejected_total{code="origin_not_allowed"}',
      'tollgate_verifications_total{action="allow"}',
      'tollgate_verifications_rejected_total{code="challenge_invalid"}',
      'tollgate_verifications_rejected_total{code="invalid_site_key"}',
      'tollgate_siteverify_total{result="success"}',
      'tollgate_siteverify_total{result="timeout-or-duplicate"}',
      'tollgate_siteverify_total{result="test"}',
    ]
    const before = await metrics()

    const headers = browserHeaders(site.siteKey)
    const token = await obtainToken(service.app, headers) // 1 challenge, 1 allow
    const challenge = await fetchChallenge(service.app, headers) // 1 challenge
    await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders('tgk_nosuchkey') }) // invalid_site_key
    const guarded = await createTestSite(service.app, { domains: ['only.example'] })
    await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(guarded.siteKey, 'https://elsewhere.example') }) // origin_not_allowed
    const submission = humanSubmission(challenge)
    await submitSolution(service.app, headers, submission) // 1 allow
    await submitSolution(service.app, headers, submission) // challenge_invalid
    await submitSolution(service.app, browserHeaders('tgk_nosuchkey'), submission) // invalid_site_key
    await service.app.inject({ method: 'POST', url: '/siteverify', payload: { secret: site.secretKey, response: token } }) // success
    await service.app.inject({ method: 'POST', url: '/siteverify', payload: { secret: site.secretKey, response: token } }) // duplicate
    // The test secrets' fixed answers are counted apart, not as successes or duplicates.
    for (const secret of ['1x0000000000000000000000000000000AA', '3x0000000000000000000000000000000AA']) {
      await service.app.inject({ method: 'POST', url: '/siteverify', payload: { secret, response: 'anything' } })
    }

    const after = await metrics()
    expect(series.map((name) => sampleOf(after, name) - sampleOf(before, name))).toEqual([2, 1, 1, 2, 1, 1, 1, 1, 2])
  })
})
