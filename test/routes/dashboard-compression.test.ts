import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMPRESSION_THRESHOLD_BYTES } from '../../src/routes/v1/dashboard.js'
import { browserHeaders } from '../helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

/** The dashboard API's large answers go compressed to a client that asks; the SDK's and Siteverify's routes are left as they were. */
describe('compression of the dashboard API', () => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  beforeAll(async () => {
    service = await buildTestApp()
    account = await createTestAccount(service.app)
    // Enough sites for a list well above the threshold (each record is some 500 bytes).
    for (let number = 0; number < 30; number++) site = await createTestSite(service.app, account, { name: `Shop ${number}`, domains: [`shop${number}.example.com`] })
  })
  afterAll(() => service.close())

  const listSites = (acceptEncoding?: string) =>
    service.app.inject({ method: 'GET', url: '/api/v1/sites?include=summary', headers: { ...asScript(account), ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }) } })

  it('answers a large list in br or gzip, as asked, with the same JSON', async () => {
    const plain = await listSites()
    expect(plain.statusCode).toBe(200)
    expect(plain.headers['content-encoding']).toBeUndefined()
    expect(plain.rawPayload.length).toBeGreaterThan(COMPRESSION_THRESHOLD_BYTES)

    const gzipped = await listSites('gzip')
    expect(gzipped.headers['content-encoding']).toBe('gzip')
    expect(gzipped.headers.vary).toMatch(/accept-encoding/i)
    expect(gzipped.headers['cache-control']).toBe('no-store')
    expect(gzipped.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3)
    expect(JSON.parse(gunzipSync(gzipped.rawPayload).toString('utf8'))).toEqual(plain.json())

    const brotli = await listSites('gzip, deflate, br')
    expect(brotli.headers['content-encoding']).toBe('br')
    expect(JSON.parse(brotliDecompressSync(brotli.rawPayload).toString('utf8'))).toEqual(plain.json())
  })

  it('leaves a small answer of the API as it is', async () => {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: { ...asScript(account), 'accept-encoding': 'gzip, br' } })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-encoding']).toBeUndefined()
    expect(response.json<{ id: string }>().id).toBe(site.id)
  })

  it("leaves the SDK's and Siteverify's answers, and every route outside the dashboard API, as they were", async () => {
    const challenge = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: { ...browserHeaders(site.siteKey, `https://${site.domains[0] ?? ''}`), 'accept-encoding': 'gzip, br' } })
    expect(challenge.statusCode).toBe(200)
    expect(challenge.headers['content-encoding']).toBeUndefined()
    expect(challenge.headers.vary ?? '').not.toMatch(/accept-encoding/i)
    const siteverify = await service.app.inject({
      method: 'POST',
      url: '/api/v1/siteverify',
      headers: { 'accept-encoding': 'gzip, br' },
      payload: { secret: site.secretKey, response: 'not-a-token' },
    })
    expect(siteverify.statusCode).toBe(200)
    expect(siteverify.headers['content-encoding']).toBeUndefined()
    // The OpenAPI document is JSON far above the threshold: outside the dashboard API's scope, no hook of the plugin sees it.
    const openApi = await service.app.inject({ method: 'GET', url: '/docs/json', headers: { 'accept-encoding': 'gzip, br' } })
    expect(openApi.statusCode).toBe(200)
    expect(openApi.rawPayload.length).toBeGreaterThan(COMPRESSION_THRESHOLD_BYTES)
    expect(openApi.headers['content-encoding']).toBeUndefined()
  })
})
