import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserHeaders, humanSubmission } from '../helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

interface Row {
  id: string
  clientIp: string | null
  decidedBy: string | null
  action: string
}

/** Verifies a visitor on the site from each address (through a proxy when `extraHeaders` name one), then writes the log. */
async function verifyFrom(service: TestApp, site: CreatedSite, remoteAddresses: string[], extraHeaders: Record<string, string> = {}): Promise<void> {
  for (const remoteAddress of remoteAddresses) {
    const headers = { ...browserHeaders(site.siteKey), ...extraHeaders }
    const challenge = (await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers, remoteAddress })).json<Challenge>()
    const verified = await service.app.inject({ method: 'POST', url: '/api/v1/verify', headers, remoteAddress, payload: humanSubmission(challenge) })
    expect(verified.statusCode, verified.body).toBe(200)
  }
  await service.app.verificationLog.flush()
}

/** The site's log rows, oldest first. */
async function listRows(service: TestApp, site: CreatedSite, account: TestAccount, query = ''): Promise<Row[]> {
  const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications${query}`, headers: asScript(account) })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ items: Row[] }>().items.reverse()
}

/** LOG_CLIENT_IP=truncated: the log keeps a visitor's network, while the verification judged the whole address. */
describe.each([
  { mode: 'truncated', stored: ['203.0.113.0', '203.0.113.0', '2001:db8:1::'] },
  { mode: 'full', stored: ['203.0.113.77', '203.0.113.78', '2001:db8:1:2::9'] },
])('the verification log under LOG_CLIENT_IP=$mode', ({ mode, stored }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite

  beforeAll(async () => {
    service = await buildTestApp({ env: { LOG_CLIENT_IP: mode } })
    account = await createTestAccount(service.app)
    // The allowlist names one address of the /24: only the whole address can match it.
    site = await createTestSite(service.app, account, { settings: { difficulty: 4, allowedAddresses: ['203.0.113.77'] } })
    await verifyFrom(service, site, ['203.0.113.77', '203.0.113.78', '2001:db8:1:2::9'])
  })
  afterAll(() => service.close())

  const list = (query = '') => listRows(service, site, account, query)

  it('stores the address so, while the allowlist still matched the whole address', async () => {
    const rows = await list()
    expect(rows.map((row) => row.clientIp)).toEqual(stored)
    expect(rows.map((row) => row.decidedBy)).toEqual(['allowlist', null, null])
  })

  it("raises the next challenges of a fraudulent row's client only with the whole address: a truncated one names a network", async () => {
    const row = (await list()).find((item) => item.clientIp?.startsWith('2001:db8:1:'))!
    const labeled = await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}/verifications/${row.id}/label`, headers: asScript(account), payload: { label: 'fraudulent' } })
    expect(labeled.statusCode, labeled.body).toBe(200)
    // The truncated row's /48 read as a client would be the network's first /64, someone else's.
    const difficultyAt = async (remoteAddress: string) =>
      (await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey), remoteAddress })).json<Challenge>().difficulty
    expect(await difficultyAt('2001:db8:1::5')).toBe(4)
    expect(await difficultyAt('2001:db8:1:2::9')).toBe(mode === 'truncated' ? 4 : 6)
  })

  it("finds and deletes a visitor's rows by the address the visitor gives", async () => {
    expect((await list('?clientIp=203.0.113.77')).map((row) => row.clientIp)).toEqual(mode === 'truncated' ? ['203.0.113.0', '203.0.113.0'] : ['203.0.113.77'])
    const erased = await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/verifications?clientIp=2001:db8:1:2::9`, headers: asScript(account) })
    expect(erased.json()).toEqual({ deleted: 1 })
  })
})

/**
 * LOG_CLIENT_IP changed, either way: the log holds rows in both forms until retention removes the
 * older ones, and a visitor's filter and erasure find both; a fraudulent label raises a client by
 * the row's own form, not by the mode now.
 */
describe.each([
  { mode: 'truncated', before: 'full', earlier: ['203.0.113.77', '2001:db8:1:2::9'], logged: ['203.0.113.0', '2001:db8:1::'] },
  { mode: 'full', before: 'truncated', earlier: ['203.0.113.0', '2001:db8:1::'], logged: ['203.0.113.77', '2001:db8:1:2::9'] },
])('the verification log under LOG_CLIENT_IP=$mode, switched from $before', ({ mode, earlier, logged }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  const earlierIds: string[] = []

  beforeAll(async () => {
    service = await buildTestApp({ env: { LOG_CLIENT_IP: mode } })
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account, { settings: { difficulty: 4 } })
    // Rows logged before the switch, as the other mode wrote them.
    const rows = earlier.map((clientIp, index) => ({ siteId: site.id, createdAt: new Date(Date.now() - (10 - index) * 60_000), action: 'allow' as const, clientIp, challengeId: randomUUID() }))
    earlierIds.push(...(await insertVerifications(service.app.database, rows)))
    await verifyFrom(service, site, ['203.0.113.77', '2001:db8:1:2::9'])
  })
  afterAll(() => service.close())

  const list = (query = '') => listRows(service, site, account, query)

  it('finds a visitor address in the rows of either mode', async () => {
    expect((await list()).map((row) => row.clientIp)).toEqual([...earlier, ...logged])
    expect((await list('?clientIp=203.0.113.77')).map((row) => row.clientIp)).toEqual([earlier[0], logged[0]])
    expect((await list('?clientIp=2001:db8:1:2::9')).map((row) => row.clientIp)).toEqual([earlier[1], logged[1]])
  })

  it("raises a fraudulent row's client only when the row holds a whole address, whatever the mode now", async () => {
    const [, ipv6Row] = earlierIds
    const labeled = await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}/verifications/${ipv6Row}/label`, headers: asScript(account), payload: { label: 'fraudulent' } })
    expect(labeled.statusCode, labeled.body).toBe(200)
    const difficultyAt = async (remoteAddress: string) =>
      (await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey), remoteAddress })).json<Challenge>().difficulty
    expect(await difficultyAt('2001:db8:1::5')).toBe(4)
    expect(await difficultyAt('2001:db8:1:2::9')).toBe(mode === 'truncated' ? 6 : 4)
  })

  it("erases a visitor's rows of both modes, and answers their count", async () => {
    const erased = await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/verifications?clientIp=203.0.113.77`, headers: asScript(account) })
    expect(erased.json()).toEqual({ deleted: 2 })
    expect((await list()).map((row) => row.clientIp)).toEqual([earlier[1], logged[1]])
  })
})

/** Behind a proxy, X-Forwarded-For may spell an address in capitals and with leading zeros. */
describe('a visitor address a trusted proxy spells its own way, under LOG_CLIENT_IP=full', () => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  const proxy = '10.0.0.5'

  beforeAll(async () => {
    service = await buildTestApp({ env: { LOG_CLIENT_IP: 'full', TRUST_PROXY: proxy } })
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account, { settings: { difficulty: 4 } })
    await verifyFrom(service, site, [proxy], { 'x-forwarded-for': '2001:0DB8:0000::0001' })
    // A row logged before the log spelled addresses one way, as the proxy wrote it.
    await insertVerifications(service.app.database, [{ siteId: site.id, createdAt: new Date(Date.now() - 60_000), action: 'allow', clientIp: '2001:DB8::2' }])
  })
  afterAll(() => service.close())

  it('logs the address in its canonical spelling, and finds and erases it and an older capitalised row by theirs', async () => {
    const list = async (query: string) => (await listRows(service, site, account, query)).map((row) => row.clientIp)
    expect(await list('?clientIp=2001:db8::1')).toEqual(['2001:db8::1'])
    expect(await list('?clientIp=2001:db8::2')).toEqual(['2001:DB8::2'])
    for (const address of ['2001:db8::1', '2001:db8::2']) {
      const erased = await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/verifications?clientIp=${address}`, headers: asScript(account) })
      expect(erased.json()).toEqual({ deleted: 1 })
    }
    expect(await list('')).toEqual([])
  })
})
