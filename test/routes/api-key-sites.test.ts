import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { askForKey as askAs, createKey as createAs, errorOf, withKey as requestWith, type CreatedKey } from '../helpers/api-keys.js'
import { asBrowser, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite, useAppWithOwner } from '../helpers/site-sharing.js'
import { deployments, type TestApp } from '../helpers/test-app.js'

const RESTRICTED = 'api_key_site_restricted'

/** API keys made for some of the account's sites only (siteIds): they reach those, and nothing of the others. */
describe.each(deployments)('API keys for some sites only on $name', (deployment) => {
  const { available } = deployment
  const suite = useAppWithOwner(deployment)
  let service: TestApp
  let account: TestAccount
  beforeAll(() => {
    if (available) ({ service, owner: account } = suite)
  })

  const askForKey = (owner: TestAccount, payload: object) => askAs(service.app, owner, payload)
  const createKey = (payload: object, owner = account) => createAs(service.app, owner, payload)
  const withKey = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, key: string, payload?: object) => requestWith(service.app, method, url, key, payload)
  const listedSiteIds = async (key: string) => (await withKey('GET', '/api/v1/sites', key)).json<{ items: { id: string }[] }>().items.map((site) => site.id)

  it.skipIf(!available)('reaches its sites only: another site of the account answers as a site the account has no part in', async () => {
    const mine = await createTestSite(service.app, account, { name: 'Client A' })
    const other = await createTestSite(service.app, account, { name: 'Client B' })
    const key = await createKey({ name: 'ci client A', siteIds: [mine.id.toUpperCase()] })
    expect(key.siteIds).toEqual([mine.id])

    expect((await withKey('GET', `/api/v1/sites/${mine.id}`, key.key)).statusCode).toBe(200)
    expect((await withKey('GET', `/api/v1/sites/${mine.id}/stats`, key.key)).statusCode).toBe(200)
    const renamed = await withKey('PUT', `/api/v1/sites/${mine.id}`, key.key, { name: 'Client A renamed' })
    expect(renamed.statusCode).toBe(200)

    // The same answer, to the byte, as an id no account has: nothing tells that the site exists.
    const nobody = await withKey('GET', `/api/v1/sites/${randomUUID()}`, key.key)
    expect(nobody.statusCode).toBe(404)
    for (const [method, url, payload] of [
      ['GET', `/api/v1/sites/${other.id}`, undefined],
      ['GET', `/api/v1/sites/${other.id}/stats`, undefined],
      ['GET', `/api/v1/sites/${other.id}/verifications`, undefined],
      ['GET', `/api/v1/sites/${other.id}/webhook-deliveries`, undefined],
      ['PUT', `/api/v1/sites/${other.id}`, { name: 'Taken over' }],
      ['POST', `/api/v1/sites/${other.id}/secret/rotate`, {}],
      ['DELETE', `/api/v1/sites/${other.id}`, undefined],
    ] as const) {
      const refused = await withKey(method, url, key.key, payload)
      expect(refused.statusCode, `${method} ${url}`).toBe(404)
      expect(errorOf(refused), `${method} ${url}`).toMatchObject({ code: 'not_found', message: errorOf(nobody).message })
    }
    const untouched = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${other.id}`, headers: asBrowser(account) })
    expect(untouched.json()).toMatchObject({ name: 'Client B' })

    // Lists its site only; the session (and a key for all sites) lists both.
    expect(await listedSiteIds(key.key)).toEqual([mine.id])
    const everything = await createKey({ name: 'all sites' })
    expect(everything.siteIds).toBeNull()
    expect(await listedSiteIds(everything.key)).toEqual(expect.arrayContaining([mine.id, other.id]))
    expect((await withKey('GET', `/api/v1/sites/${other.id}`, everything.key)).statusCode).toBe(200)
  })

  it.skipIf(!available)('cannot create a site (403 api_key_site_restricted, whatever the body); a key for all sites can', async () => {
    const site = await createTestSite(service.app, account, { name: 'Only this' })
    const key = await createKey({ siteIds: [site.id] })
    const before = await listedSiteIds(account.apiKey)
    for (const payload of [{ name: 'Made by a restricted key' }, { name: 42 }]) {
      const refused = await withKey('POST', '/api/v1/sites', key.key, payload)
      expect(refused.statusCode).toBe(403)
      expect(errorOf(refused).code).toBe(RESTRICTED)
    }
    expect(await listedSiteIds(account.apiKey)).toEqual(before)
    expect((await withKey('POST', '/api/v1/sites', account.apiKey, { name: 'Made by a full key' })).statusCode).toBe(201)
  })

  it.skipIf(!available)('keeps its access on top: a read key for a site reads it and cannot change it', async () => {
    const site = await createTestSite(service.app, account, { name: 'Watched' })
    const key = await createKey({ access: 'read', siteIds: [site.id] })
    expect((await withKey('GET', `/api/v1/sites/${site.id}`, key.key)).statusCode).toBe(200)
    const refused = await withKey('PUT', `/api/v1/sites/${site.id}`, key.key, { name: 'Changed by a read key' })
    expect(refused.statusCode).toBe(403)
    expect(errorOf(refused).code).toBe('forbidden')
    const read = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}`, headers: asBrowser(account) })
    expect(read.json()).toMatchObject({ name: 'Watched' })
  })

  it.skipIf(!available)('is refused at its making for a site the account has no part in (400 api_key_site_not_found): no key is made', async () => {
    const stranger = await createTestAccount(service.app)
    const foreign = await createTestSite(service.app, stranger, { name: 'Not yours' })
    const mine = await createTestSite(service.app, account, { name: 'Yours' })
    const keysBefore = (await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(account) })).json<{ items: unknown[] }>().items.length
    for (const siteIds of [[mine.id, foreign.id], [randomUUID()], ['not-an-id']]) {
      const refused = await askForKey(account, { siteIds })
      expect(refused.statusCode, JSON.stringify(siteIds)).toBe(400)
      expect(errorOf(refused).code).toBe('api_key_site_not_found')
    }
    // Told before the password: a wrong one does not change the answer.
    expect(errorOf(await askForKey(account, { siteIds: [foreign.id], password: 'wrong password!' })).code).toBe('api_key_site_not_found')
    const empty = await askForKey(account, { siteIds: [] })
    expect(empty.statusCode).toBe(400)
    expect(errorOf(empty).code).toBe('validation_error')
    const keysAfter = (await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(account) })).json<{ items: unknown[] }>().items.length
    expect(keysAfter).toBe(keysBefore)
  })

  it.skipIf(!available)('is listed with its sites, and its making is audited with them', async () => {
    const site = await createTestSite(service.app, account, { name: 'Listed' })
    const key = await createKey({ name: 'listed key', siteIds: [site.id, site.id] })
    expect(key.siteIds).toEqual([site.id])
    const listed = (await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(account) })).json<{ items: CreatedKey[] }>().items
    expect(listed.find((item) => item.id === key.id)).toMatchObject({ siteIds: [site.id] })
    expect(listed.find((item) => item.id !== key.id)).toMatchObject({ siteIds: null })
    const events = (
      await service.app.inject({ method: 'GET', url: '/api/v1/audit-log?action=api_key.created', headers: asBrowser(account) })
    ).json<{ items: { details: { apiKeyId: string; siteIds: string[] | null } }[] }>().items
    expect(events.find((event) => event.details.apiKeyId === key.id)?.details.siteIds).toEqual([site.id])
  })

  it.skipIf(!available)("keeps the account-wide reads to its sites: the audit log, its sites, the search of references, the keys", async () => {
    const owner = await createTestAccount(service.app)
    const mine = await createTestSite(service.app, owner, { name: 'Audited A' })
    const other = await createTestSite(service.app, owner, { name: 'Audited B' })
    const key = await createKey({ name: 'auditor', siteIds: [mine.id] }, owner)

    const events = (await withKey('GET', '/api/v1/audit-log', key.key)).json<{ items: { site: { id: string } | null }[] }>().items
    expect(events.length).toBeGreaterThan(0)
    expect(events.every((event) => event.site?.id === mine.id)).toBe(true)
    expect((await withKey('GET', `/api/v1/audit-log?siteId=${other.id}`, key.key)).json<{ items: unknown[] }>().items).toEqual([])
    const exported = await withKey('GET', '/api/v1/audit-log/export?format=ndjson', key.key)
    expect(exported.statusCode).toBe(200)
    const lines = exported.body.trim().split('\n').map((line) => JSON.parse(line) as { site: { id: string } | null })
    expect(lines.length).toBe(events.length)
    expect(lines.every((line) => line.site?.id === mine.id)).toBe(true)
    const logged = (await withKey('GET', '/api/v1/audit-log/sites', key.key)).json<{ items: { id: string }[] }>().items
    expect(logged.map((site) => site.id)).toEqual([mine.id])
    const all = (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log/sites', headers: asBrowser(owner) })).json<{ items: { id: string }[] }>().items
    expect(all.map((site) => site.id)).toEqual(expect.arrayContaining([mine.id, other.id]))

    // A reference of the other site's log is not found through it; the session finds it.
    const rowId = randomUUID()
    await service.app.database.query(
      "INSERT INTO verifications (id, site_id, created_at, action) VALUES ($1, $2, now(), 'allow')",
      [rowId, other.id],
    )
    const reference = rowId.slice(0, 13)
    expect((await withKey('GET', `/api/v1/verifications?reference=${reference}`, key.key)).json<{ items: unknown[] }>().items).toEqual([])
    const found = await service.app.inject({ method: 'GET', url: `/api/v1/verifications?reference=${reference}`, headers: asBrowser(owner) })
    expect(found.json<{ items: { id: string }[] }>().items.map((row) => row.id)).toEqual([rowId])

    // It sees, and may revoke, itself alone.
    const keys = (await withKey('GET', '/api/v1/api-keys', key.key)).json<{ items: { id: string }[] }>().items
    expect(keys.map((item) => item.id)).toEqual([key.id])
    const others = (await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(owner) })).json<{ items: { id: string }[] }>().items
    const unrestricted = others.find((item) => item.id !== key.id)
    expect(unrestricted).toBeDefined()
    const notRevoked = await withKey('DELETE', `/api/v1/api-keys/${unrestricted?.id ?? ''}`, key.key)
    expect(notRevoked.statusCode).toBe(404)
    expect((await withKey('GET', '/api/v1/me', owner.apiKey)).statusCode).toBe(200)
    expect((await withKey('DELETE', `/api/v1/api-keys/${key.id}`, key.key)).statusCode).toBe(204)
    expect((await withKey('GET', '/api/v1/me', key.key)).statusCode).toBe(401)
  })

  it.skipIf(!available)('no longer reaches a listed site its account has left', async () => {
    const member = await createTestAccount(service.app)
    const shared = await createTestSite(service.app, account, { name: 'Shared' })
    await shareSite(service.app, account, member, shared.id, 'admin')
    const key = await createKey({ siteIds: [shared.id] }, member)
    expect((await withKey('GET', `/api/v1/sites/${shared.id}`, key.key)).statusCode).toBe(200)
    expect(await listedSiteIds(key.key)).toEqual([shared.id])

    const removed = await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${shared.id}/members/${member.id}`, headers: asBrowser(account) })
    expect(removed.statusCode).toBe(204)
    const gone = await withKey('GET', `/api/v1/sites/${shared.id}`, key.key)
    expect(gone.statusCode).toBe(404)
    expect(errorOf(gone).code).toBe('not_found')
    expect(await listedSiteIds(key.key)).toEqual([])
    // The key itself still works, for nothing.
    expect((await withKey('GET', '/api/v1/me', key.key)).statusCode).toBe(200)
  })
})
