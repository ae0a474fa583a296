import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite } from '../helpers/site-sharing.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { insertVerifications, type VerificationRow } from '../helpers/verification-rows.js'

const HOUR_MS = 3_600_000

interface ListedSite extends CreatedSite {
  role: string
  summary?: { from: string; verifications: number; blocked: number }
}

/** An agency's dozen client sites: found by name, domain or key, sorted, and summed up in one listing. */
describe('sites: search, sort and the last 24 hours of each in the list', () => {
  let service: TestApp
  let agency: TestAccount
  let colleague: TestAccount
  let client: TestAccount
  let clientSites: CreatedSite[]
  let clientOwn: CreatedSite
  beforeAll(async () => {
    service = await buildTestApp()
    ;[agency, colleague, client] = await Promise.all([createTestAccount(service.app), createTestAccount(service.app), createTestAccount(service.app)])
    clientSites = []
    // Created 12 down to 1 in turn: oldest first is not name order, and 2 sorts before 10 by name.
    for (const number of [12, 2, 10, 1]) {
      const padded = String(number).padStart(2, '0')
      clientSites.push(await createTestSite(service.app, agency, { name: `Client ${number} shop`, domains: [`shop${padded}.client.example`] }))
    }
    clientOwn = await createTestSite(service.app, client, { name: 'Client 2 shop (own)', domains: ['shop02.client.example'] })
    await shareSite(service.app, agency, colleague, clientSites[1]?.id ?? '', 'viewer')

    const currentHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS
    const at = (hoursAgo: number) => new Date(currentHour - hoursAgo * HOUR_MS + 60_000)
    const [twelve, two] = clientSites
    const rows: VerificationRow[] = [
      { siteId: twelve?.id ?? '', createdAt: at(0), action: 'allow' },
      { siteId: twelve?.id ?? '', createdAt: at(0), action: 'block', riskScore: 95 },
      { siteId: twelve?.id ?? '', createdAt: at(23), action: 'block', riskScore: 90 },
      { siteId: twelve?.id ?? '', createdAt: at(23), action: 'rejected' },
      // Older than the current hour and the 23 before it: not counted.
      { siteId: twelve?.id ?? '', createdAt: at(24), action: 'block', riskScore: 99 },
      { siteId: two?.id ?? '', createdAt: at(5), action: 'challenge', riskScore: 50 },
      // The client's own site: never in the agency's figures.
      { siteId: clientOwn.id, createdAt: at(0), action: 'block', riskScore: 99 },
    ]
    await insertVerifications(service.app.database, rows)
  })
  afterAll(() => service.close())

  const list = async (account: TestAccount, query = '') => {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites${query}`, headers: asScript(account) })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ items: ListedSite[] }>().items
  }
  const names = (sites: ListedSite[]) => sites.map((site) => site.name)

  it('still lists oldest first, without a summary, when asked nothing', async () => {
    const sites = await list(agency)
    expect(names(sites)).toEqual(['Client 12 shop', 'Client 2 shop', 'Client 10 shop', 'Client 1 shop'])
    expect(sites.every((site) => site.summary === undefined)).toBe(true)
  })

  it('finds sites by a part of their name, a domain or the site key, whatever the case', async () => {
    expect(names(await list(agency, '?q=CLIENT%201'))).toEqual(['Client 12 shop', 'Client 10 shop', 'Client 1 shop'])
    expect(names(await list(agency, '?q=shop02.Client'))).toEqual(['Client 2 shop'])
    const key = clientSites[2]?.siteKey ?? ''
    expect(names(await list(agency, `?q=${key.slice(0, 12).toUpperCase()}`))).toEqual(['Client 10 shop'])
    expect(await list(agency, '?q=nothing-like-it')).toEqual([])
    expect(await list(agency, '?q=')).toHaveLength(4)
  })

  it('sorts by name as a person reads it: Client 2 before Client 10', async () => {
    expect(names(await list(agency, '?sort=name'))).toEqual(['Client 1 shop', 'Client 2 shop', 'Client 10 shop', 'Client 12 shop'])
    expect(names(await list(agency, '?sort=created&q=client'))).toEqual(['Client 12 shop', 'Client 2 shop', 'Client 10 shop', 'Client 1 shop'])
  })

  it("adds each site's verifications and blocked ones of the current hour and the 23 before it with include=summary", async () => {
    const sites = await list(agency, '?include=summary&sort=name')
    const summaryOf = (name: string) => sites.find((site) => site.name === name)?.summary
    const from = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 23 * HOUR_MS
    expect(summaryOf('Client 12 shop')).toEqual({ from: new Date(from).toISOString(), verifications: 4, blocked: 2 })
    expect(summaryOf('Client 2 shop')).toMatchObject({ verifications: 1, blocked: 0 })
    expect(summaryOf('Client 1 shop')).toMatchObject({ verifications: 0, blocked: 0 })
    // The same figures as the site's own stats.
    const stats = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${clientSites[0]?.id ?? ''}/stats`, headers: asScript(agency) })
    expect(stats.json().totals).toMatchObject({ total: 4, block: 2 })
  })

  it("shows a member only the sites they are a member of, with theirs summed up, and never another account's", async () => {
    const sites = await list(colleague, '?include=summary&q=client')
    expect(sites.map((site): unknown[] => [site.name, site.role, site.summary?.verifications])).toEqual([['Client 2 shop', 'viewer', 1]])
    const own = await list(client, '?include=summary')
    expect(own.map((site): unknown[] => [site.name, site.summary?.blocked])).toEqual([['Client 2 shop (own)', 1]])
  })

  it('answers 400 for a sort or include it does not know, and for a parameter it does not take', async () => {
    for (const query of ['?sort=traffic', '?include=everything', '?limit=10']) {
      const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites${query}`, headers: asBrowser(agency) })
      expect(response.statusCode, query).toBe(400)
      expect(response.json().error.code).toBe('validation_error')
    }
  })
})
