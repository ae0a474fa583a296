import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, createTestAccount, createTestSite, randomClientAddress, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

interface CreatedKey {
  id: string
  key: string
  access: 'full' | 'read'
  expiresAt: string | null
}

const READ_ONLY = 'This API key is read-only: it can read (GET) but not change anything.'

/** What an API key may do once made: a read key only reads, an expired key nothing. */
describe.each(deployments)('API keys that read only or expire on $name', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp(options)
    account = await createTestAccount(service.app)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  const createKey = async (payload: object): Promise<CreatedKey> => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: asBrowser(account),
      payload: { name: 'made here', password: account.password, ...payload },
      remoteAddress: randomClientAddress(),
    })
    if (response.statusCode !== 201) throw new Error(`API key creation answered ${response.statusCode}: ${response.body}`)
    return response.json<CreatedKey>()
  }
  const withKey = (method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE', url: string, key: string, payload?: object) =>
    service.app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload === undefined ? {} : { payload }) })
  const siteNames = async () =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asBrowser(account) })).json<{ items: { name: string }[] }>().items.map((site) => site.name)
  const listedKey = async (id: string) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(account) }))
      .json<{ items: { id: string; access: string; expiresAt: string | null; lastUsedAt: string | null }[] }>()
      .items.find((item) => item.id === id)

  it.skipIf(!available)('lets a read key read, and refuses it anything else with 403 forbidden, revoking itself included', async () => {
    const site = await createTestSite(service.app, account, { name: 'Shop' })
    const { id, key } = await createKey({ name: 'monitor', access: 'read' })

    const sites = await withKey('GET', '/api/v1/sites', key)
    expect(sites.statusCode).toBe(200)
    expect(sites.json<{ items: { id: string }[] }>().items.map((item) => item.id)).toContain(site.id)
    expect((await withKey('HEAD', '/api/v1/sites', key)).statusCode).toBe(200)
    expect((await withKey('GET', `/api/v1/sites/${site.id}/stats`, key)).statusCode).toBe(200)
    expect((await withKey('GET', '/api/v1/audit-log', key)).statusCode).toBe(200)

    const namesBefore = await siteNames()
    for (const [method, url, payload] of [
      ['POST', '/api/v1/sites', { name: 'Made by a read key' }],
      ['PUT', `/api/v1/sites/${site.id}`, { name: 'Renamed by a read key' }],
      ['POST', `/api/v1/sites/${site.id}/secret/rotate`, {}],
      ['DELETE', `/api/v1/sites/${site.id}`, undefined],
      ['DELETE', `/api/v1/api-keys/${id}`, undefined],
      ['POST', '/api/v1/api-keys', { name: 'minted', password: account.password }],
    ] as const) {
      const refused = await withKey(method, url, key, payload)
      expect(refused.statusCode, `${method} ${url}`).toBe(403)
      expect(refused.json().error).toMatchObject({ code: 'forbidden', message: READ_ONLY })
    }
    expect(await siteNames()).toEqual(namesBefore)
    // Not revoked: it still reads, and is still listed as it was made.
    expect((await withKey('GET', '/api/v1/me', key)).statusCode).toBe(200)
    expect(await listedKey(id)).toMatchObject({ access: 'read', expiresAt: null, expired: false })
    // The same requests with a full key go through.
    const full = await createKey({ name: 'deploy' })
    expect((await withKey('PUT', `/api/v1/sites/${site.id}`, full.key, { name: 'Renamed' })).statusCode).toBe(200)
    expect((await withKey('DELETE', `/api/v1/api-keys/${id}`, full.key)).statusCode).toBe(204)
    expect((await withKey('GET', '/api/v1/me', key)).statusCode).toBe(401)
  })

  it.skipIf(!available)("works until it expires, by the database's clock; then 401, its attempts not recorded as uses, and still listed", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
    const { id, key } = await createKey({ name: 'for a week', expiresAt })
    const lastUsed = async () =>
      (await service.app.database.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_keys WHERE id = $1', [id]))[0]?.last_used_at?.toISOString() ?? null
    const updateRow = async (assignments: string) =>
      (await service.app.database.query<{ last_used_at: Date; expires_at: Date }>(`UPDATE api_keys SET ${assignments} WHERE id = $1 RETURNING last_used_at, expires_at`, [id]))[0]

    // Before its expiry it works, and its use is recorded (marked an hour ago, a use now shows).
    const before = await updateRow("last_used_at = now() - interval '1 hour'")
    expect((await withKey('GET', '/api/v1/me', key)).statusCode).toBe(200)
    expect(await lastUsed()).not.toBe(before?.last_used_at.toISOString())
    expect(await listedKey(id)).toMatchObject({ expiresAt, expired: false })

    // Expired a second ago by the database's clock.
    const expired = await updateRow("last_used_at = now() - interval '1 hour', expires_at = now() - interval '1 second'")
    const expiredAt = expired?.expires_at.toISOString()
    for (const method of ['GET', 'POST'] as const) {
      const refused = await withKey(method, '/api/v1/sites', key, method === 'POST' ? { name: 'Late' } : undefined)
      expect(refused.statusCode).toBe(401)
      expect(refused.json().error).toMatchObject({ code: 'unauthorized', message: `The API key expired at ${expiredAt}; make a new one in the dashboard.` })
    }
    expect(await lastUsed()).toBe(expired?.last_used_at.toISOString())
    expect(await siteNames()).not.toContain('Late')
    // Listed until its owner revokes it, so they see why a script stopped.
    expect(await listedKey(id)).toMatchObject({ expiresAt: expiredAt, expired: true, lastUsedAt: expired?.last_used_at.toISOString() })
    expect((await service.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers: asBrowser(account) })).statusCode).toBe(204)
  })

  it.skipIf(!available)('tells an expired read key that it expired, whatever it asks', async () => {
    const { id, key } = await createKey({ name: 'old monitor', access: 'read', expiresAt: new Date(Date.now() + 3_600_000).toISOString() })
    await service.app.database.query("UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1", [id])
    const refused = await withKey('DELETE', `/api/v1/api-keys/${id}`, key)
    expect(refused.statusCode).toBe(401)
    expect(refused.json().error.message).toMatch(/^The API key expired at /)
  })
})
