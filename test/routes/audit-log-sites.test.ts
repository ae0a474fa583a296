import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite } from '../helpers/site-sharing.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

interface LoggedSite {
  id: string
  name: string
  deleted: boolean
}

/**
 * The Activity page's site filter offers the sites of the account's log, not only those it has
 * now: a site transferred away, or deleted, still has its events there.
 */
describe.each(deployments)("the sites of an account's audit log, on $name", ({ available, options }) => {
  let service: TestApp
  let agency: TestAccount
  let client: TestAccount
  let kept: CreatedSite
  let handedOver: CreatedSite
  let deleted: CreatedSite
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp(options)
    ;[agency, client] = await Promise.all([createTestAccount(service.app), createTestAccount(service.app)])
    kept = await createTestSite(service.app, agency, { name: 'Client 01 shop' })
    handedOver = await createTestSite(service.app, agency, { name: 'Client 02 shop' })
    deleted = await createTestSite(service.app, agency, { name: 'Client 03 shop' })
    // The agency hands Client 02 over to the client, who then removes the agency from it.
    await shareSite(service.app, agency, client, handedOver.id, 'admin')
    const transferred = await service.app.inject({
      method: 'POST',
      url: `/api/v1/sites/${handedOver.id}/transfer`,
      headers: asBrowser(agency),
      payload: { accountId: client.id, password: agency.password },
    })
    expect(transferred.statusCode, transferred.body).toBe(200)
    const removed = await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${handedOver.id}/members/${agency.id}`, headers: asScript(client) })
    expect(removed.statusCode, removed.body).toBe(204)
    expect((await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${deleted.id}`, headers: asScript(agency) })).statusCode).toBe(204)
  })
  afterAll(() => service?.close())

  const loggedSites = async (account: TestAccount) => {
    const response = await service.app.inject({ method: 'GET', url: '/api/v1/audit-log/sites', headers: asBrowser(account) })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ items: LoggedSite[] }>().items.sort((first, second) => first.name.localeCompare(second.name))
  }

  it.runIf(available)('lists the sites transferred away and deleted beside those the account still has, each once', async () => {
    const listed = await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asBrowser(agency) })
    expect(listed.json<{ items: CreatedSite[] }>().items.map((site) => site.name)).toEqual(['Client 01 shop'])
    expect(await loggedSites(agency)).toEqual([
      { id: kept.id, name: 'Client 01 shop', deleted: false },
      { id: handedOver.id, name: 'Client 02 shop', deleted: false },
      { id: deleted.id, name: 'Client 03 shop', deleted: true },
    ])
    // Whose events the log still answers for the site.
    const events = await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${handedOver.id}`, headers: asBrowser(agency) })
    expect(events.json<{ items: unknown[] }>().items.length).toBeGreaterThan(0)
  })

  it.runIf(available)("lists another account's only the sites of its own log", async () => {
    expect((await loggedSites(client)).map((site) => site.id)).toEqual([handedOver.id])
    const stranger = await createTestAccount(service.app)
    expect(await loggedSites(stranger)).toEqual([])
  })

  it.runIf(available)('answers 401 without credentials, and 400 for a parameter it does not take', async () => {
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/audit-log/sites' })).statusCode).toBe(401)
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/audit-log/sites?limit=5', headers: asBrowser(agency) })).statusCode).toBe(400)
  })
})
