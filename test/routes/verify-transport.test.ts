import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserFingerprint, browserHeaders, createTestSite, humanSubmission, type TestSite } from '../helpers/core-flow.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

/** The service sits behind a proxy on 127.0.0.1 (app.inject's default peer), so X-Forwarded-Proto counts. */
const PROXY = '127.0.0.1'
const LAN_SERVICE = '192.0.2.2:4103'

/** What a browser leaves out over plain http to a host that is not loopback. */
const secureOnlyHeaders = ['sec-fetch-mode', 'sec-fetch-site', 'sec-fetch-dest', 'sec-ch-ua', 'sec-ch-ua-mobile', 'sec-ch-ua-platform']

function without(headers: Record<string, string>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)))
}

/**
 * The transport decides which headers a browser must send: fetch metadata and client hints go
 * only to a potentially trustworthy URL (https, or a loopback host), so their absence counts only
 * there (a service on a LAN or intranet address over plain http gets none from any browser).
 */
describe('verification over each transport', () => {
  let service: TestApp
  let site: TestSite
  beforeAll(async () => {
    service = await buildTestApp({ env: { TRUST_PROXY: PROXY }, config: { rateLimitPerMinute: 0 } })
    site = await createTestSite(service.app)
  })
  afterAll(() => service.close())

  async function anomaliesOf(headers: Record<string, string>, fingerprint: object = browserFingerprint): Promise<string[]> {
    const issued = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers })
    expect(issued.statusCode).toBe(200)
    const challenge = issued.json<Challenge>()
    const verified = await service.app.inject({
      method: 'POST', url: '/api/v1/verify', headers, payload: { ...humanSubmission(challenge), fingerprint },
    })
    expect(verified.statusCode).toBe(200)
    await service.app.verificationLog.flush()
    const rows = await service.app.database.query<{ anomalies: string[] }>(
      'SELECT anomalies FROM verifications WHERE site_id = $1 AND challenge_id = $2', [site.site.id, challenge.challengeId],
    )
    return rows[0]?.anomalies ?? []
  }

  it('labels nothing for a browser on a LAN page calling the service over plain http', async () => {
    const origin = `http://${LAN_SERVICE}`
    const headers = { ...without(browserHeaders(site.siteKey, origin), secureOnlyHeaders), host: LAN_SERVICE }
    // Not a secure context either: the page has no navigator.userAgentData.
    expect(await anomaliesOf(headers, { ...browserFingerprint, userAgentBrands: '' })).toEqual([])
  })

  it('labels missing fetch metadata over https (behind the proxy) and over loopback http', async () => {
    const noFetchMetadata = without(browserHeaders(site.siteKey), ['sec-fetch-mode', 'sec-fetch-site', 'sec-fetch-dest'])
    const https = { ...noFetchMetadata, host: 'tollgate.example.com', 'x-forwarded-proto': 'https' }
    expect(await anomaliesOf(https)).toEqual(['missing_fetch_metadata'])
    expect(await anomaliesOf({ ...noFetchMetadata, host: '127.0.0.1:4103' })).toEqual(['missing_fetch_metadata'])
  })
})
