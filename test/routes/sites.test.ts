import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { decryptSecret } from '../../src/domain/secret-box.js'
import { acceptsSecretKey, isSecretKeyOf, type SecretKeyHolder } from '../../src/domain/sites/site-keys.js'
import { asBrowser, asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

const neverSite: SecretKeyHolder = { secretKeyHash: '', previousSecrets: [] }

const defaultSettingsView = {
  webhookUrl: null,
  webhookUrlSet: false,
  webhookSecretSet: false,
  previousWebhookSecretExpiresAt: null,
  webhookEvents: ['verification.blocked'],
  difficulty: 18,
  challengeLifetimeSeconds: 120,
  challengeThreshold: 40,
  blockThreshold: 70,
  maxStepUps: 2,
  surgeChallengesPerMinute: 0,
  allowedAddresses: [],
  blockedAddresses: [],
  blockedCountries: [],
  blockedHelpUrl: null,
  tokenAddressCheck: 'off',
  requireTwoFactor: false,
}

describe('sites: list, create, read, delete, rotate the secret', () => {
  let service: TestApp
  let account: TestAccount
  let stranger: TestAccount
  beforeAll(async () => {
    service = await buildTestApp()
    account = await createTestAccount(service.app)
    stranger = await createTestAccount(service.app)
  })
  afterAll(() => service.close())

  const createSite = (headers: Record<string, string>, payload: object) =>
    service.app.inject({ method: 'POST', url: '/api/v1/sites', headers, payload })
  const readSite = (id: string) => service.app.inject({ method: 'GET', url: `/api/v1/sites/${id}`, headers: asScript(account) })

  it('creates a site: 201 with its keys (the secret key once), normalized domains and default settings', async () => {
    const response = await createSite(asBrowser(account), { name: '  Shop  ', domains: ['Shop.Example.COM', 'shop.example.com.', 'localhost'] })
    expect(response.statusCode).toBe(201)
    const site = response.json<CreatedSite>()
    expect(site).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Shop',
      siteKey: expect.stringMatching(/^tgk_/),
      secretKey: expect.stringMatching(/^tgs_/),
      domains: ['shop.example.com', 'localhost'],
      settings: defaultSettingsView,
      previousSecretExpiresAt: null,
      secretRotatedAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      role: 'owner',
    })
    const stored = await service.app.sites.findById(site.id)
    expect(stored?.accountId).toBe(account.id)
    expect(isSecretKeyOf(site.secretKey, stored?.secretKeyHash ?? '')).toBe(true)
    // Its address and ETag, as a read of it answers them.
    expect(response.headers.location).toBe(`/api/v1/sites/${site.id}`)
    const read = await readSite(site.id)
    expect(read.statusCode).toBe(200)
    expect(response.headers.etag).toBe(read.headers.etag)
  })

  it('creates a site with settings and a webhook; the secret is stored encrypted and never shown', async () => {
    const webhookSecret = 'a-webhook-secret-of-32-characters'
    const response = await createSite(asScript(account), {
      name: 'With webhook',
      settings: { webhookUrl: 'https://hooks.example.com/tollgate', webhookSecret, difficulty: 20, blockThreshold: 90, maxStepUps: null, surgeChallengesPerMinute: 6_000 },
    })
    expect(response.statusCode).toBe(201)
    expect(response.body).not.toContain(webhookSecret)
    const site = response.json<CreatedSite>()
    expect(site.settings).toEqual({
      ...defaultSettingsView,
      webhookUrl: 'https://hooks.example.com/tollgate',
      webhookUrlSet: true,
      webhookSecretSet: true,
      difficulty: 20,
      blockThreshold: 90,
      surgeChallengesPerMinute: 6_000,
    })
    const stored = await service.app.sites.findById(site.id)
    expect(stored?.webhookSecretCiphertext).not.toContain(webhookSecret)
    const key = service.app.keyRing.keyFor('webhook-encryption')
    expect(decryptSecret(key, stored?.webhookSecretCiphertext ?? '', site.id)).toBe(webhookSecret)
    const read = await readSite(site.id)
    expect(read.body).not.toContain(webhookSecret)
    expect(read.json()).not.toHaveProperty('secretKey')
  })

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(101) }, 'name'],
    [{ name: 'ok', domains: ['https://example.com'] }, 'domains.0'],
    [{ name: 'ok', domains: ['example.com', 'example.com/path'] }, 'domains.1'],
    [{ name: 'ok', domains: ['example.com:8080'] }, 'domains.0'],
    [{ name: 'ok', domains: ['*.example.com'] }, 'domains.0'],
    [{ name: 'ok', settings: { webhookUrl: 'https://hooks.example.com' } }, 'settings.webhookSecret'],
    [{ name: 'ok', settings: { challengeThreshold: 70 } }, 'settings.challengeThreshold'],
    [{ name: 'ok', settings: { difficulty: 0 } }, 'settings.difficulty'],
    [{ name: 'ok', unknown: true }, undefined],
    // Names that show as nothing, or disguise what sits beside them.
    [{ name: '\u200b' }, 'name'],
    [{ name: '\u3164 \u3164' }, 'name'],
    [{ name: 'Shop\u0007' }, 'name'],
    [{ name: 'invoice\u202Efdp.exe' }, 'name'],
    [{ name: 'a\u2066b' }, 'name'],
    [{ name: '\u2800\u2800' }, 'name'],
    [{ name: 'Shop\u2028Admin' }, 'name'],
    [{ name: 'Shop\u2029Admin' }, 'name'],
    // The opaque origin of sandboxed frames and apps (docs/apps.md): it would admit only a host named null.
    [{ name: 'ok', domains: ['example.com', 'null'] }, 'domains.1'],
    // An IPv6 zone is not a hostname a browser sends (and the URL parser refuses it).
    [{ name: 'ok', domains: ['fe80::1%eth0'] }, 'domains.0'],
    [{ name: 'ok', domains: ['[fe80::1%25eth0]'] }, 'domains.0'],
    // Fields are named alike whichever check refuses them.
    [{ name: 'a\u0000' }, 'name'],
    [{ name: 'ok', domains: ['example.com', 'x\uDC00'] }, 'domains.1'],
  ])('answers 400 validation_error for %j', async (payload, field) => {
    const response = await createSite(asScript(account), payload)
    expect(response.statusCode).toBe(400)
    const error = response.json().error
    expect(error.code).toBe('validation_error')
    if (field !== undefined) expect(error.details).toContainEqual(expect.objectContaining({ field }))
  })

  it('counts a name\'s length in characters, and keeps the emoji, accents and scripts people use', async () => {
    for (const name of ['🛒'.repeat(100), 'Família 👨‍👩‍👧 Shop', 'Café', '東京ストア', 'متجر']) {
      const response = await createSite(asScript(account), { name })
      expect(response.statusCode, name).toBe(201)
      expect(response.json().name).toBe(name)
    }
    const tooLong = await createSite(asScript(account), { name: '🛒'.repeat(101) })
    expect(tooLong.json().error.details).toEqual([{ field: 'name', message: 'must be at most 100 characters' }])
  })

  it('stores the webhook URL as deliveries call it: the URL parser drops tabs and line breaks and lowercases the host', async () => {
    const response = await createSite(asScript(account), {
      name: 'Hooks',
      settings: { webhookUrl: ' https://Hooks.EXAMPLE.com/ho\tok\n ', webhookSecret: 'a6Kq-9zP3wXr0TmB' },
    })
    expect(response.statusCode).toBe(201)
    expect(response.json().settings.webhookUrl).toBe('https://hooks.example.com/hook')
    expect((await service.app.sites.findById(response.json<CreatedSite>().id))?.settings.webhookUrl).toBe('https://hooks.example.com/hook')
  })

  it('holds at most 100 sites per account: 409 site_limit_reached beyond, until one is deleted', async () => {
    const owner = await createTestAccount(service.app)
    for (let index = 0; index < 100; index++) expect((await createSite(asScript(owner), { name: `Site ${index}` })).statusCode).toBe(201)
    const refused = await createSite(asBrowser(owner), { name: 'One too many' })
    expect(refused.statusCode).toBe(409)
    expect(refused.json().error).toMatchObject({ code: 'site_limit_reached', message: expect.stringContaining('at most 100 sites') })
    const { items } = (await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asScript(owner) })).json<{ items: CreatedSite[] }>()
    expect(items).toHaveLength(100)
    expect(items.map((site) => site.name)).not.toContain('One too many')
    expect((await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${items[0]?.id ?? ''}`, headers: asScript(owner) })).statusCode).toBe(204)
    expect((await createSite(asScript(owner), { name: 'In its place' })).statusCode).toBe(201)
    // Another account is not affected.
    expect((await createSite(asScript(stranger), { name: 'Elsewhere' })).statusCode).toBe(201)
  })

  it("lists only the account's own sites, without secret keys", async () => {
    const mine = await createTestSite(service.app, account, { name: 'Mine' })
    const theirs = await createTestSite(service.app, stranger, { name: 'Theirs' })
    const response = await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { cookie: account.cookie } })
    expect(response.statusCode).toBe(200)
    const ids = response.json<{ items: CreatedSite[] }>().items.map((site) => site.id)
    expect(ids).toContain(mine.id)
    expect(ids).not.toContain(theirs.id)
    expect(response.body).not.toContain(mine.secretKey)
    expect(response.body).not.toContain('secretKey')
  })

  it('reads one site as created, without its secret key', async () => {
    const created = await createTestSite(service.app, account, { domains: ['example.org'] })
    const response = await readSite(created.id)
    expect(response.statusCode).toBe(200)
    const { secretKey: _secretKey, ...expected } = created
    expect(response.json()).toEqual(expected)
  })

  it('deletes a site with its verification log: 204, then 404; the site key and the stats stop at once, the log follows in batches', async () => {
    const doomed = await createTestSite(service.app, account)
    const kept = await createTestSite(service.app, account)
    expect(await service.app.siteCache.findBySiteKey(doomed.siteKey)).toBeDefined()
    const now = Date.now()
    // More rows than one DELETE statement takes (5,000).
    await insertVerifications(service.app.database, [
      ...Array.from({ length: 12_000 }, (_, index) => ({ siteId: doomed.id, createdAt: new Date(now - index * 1_000), action: 'allow' as const })),
      { siteId: kept.id, createdAt: new Date(now), action: 'allow' },
    ])
    const rollupsOf = async (siteId: string) =>
      (await service.app.database.query<{ count: number }>('SELECT count(*)::int8 AS count FROM verification_rollups WHERE site_id = $1', [siteId]))[0]?.count
    expect(await rollupsOf(doomed.id)).toBeGreaterThan(0)
    const query = vi.spyOn(service.app.database, 'query')

    const response = await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${doomed.id}`, headers: asBrowser(account) })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect((await readSite(doomed.id)).statusCode).toBe(404)
    expect(await service.app.siteCache.findBySiteKey(doomed.siteKey)).toBeUndefined()
    expect(await rollupsOf(doomed.id)).toBe(0)

    const logged = async () =>
      service.app.database.query<{ site_id: string; count: number }>(
        'SELECT site_id, count(*)::int8 AS count FROM verifications WHERE site_id = ANY($1::uuid[]) GROUP BY site_id',
        [[doomed.id, kept.id]],
      )
    await vi.waitFor(async () => expect(await logged()).toEqual([{ site_id: kept.id, count: 1 }]), { timeout: 10_000 })
    const deletes = query.mock.calls.filter(([sql]) => sql.includes('DELETE FROM verifications'))
    expect(deletes.length).toBeGreaterThanOrEqual(3)
    expect(await rollupsOf(doomed.id)).toBe(0)
    expect((await readSite(kept.id)).statusCode).toBe(200)
    query.mockRestore()
  })

  it('rotates the secret key: the new one is shown once; with invalidateImmediately the old one stops matching at once', async () => {
    const site = await createTestSite(service.app, account)
    const response = await service.app.inject({
      method: 'POST',
      url: `/api/v1/sites/${site.id}/secret/rotate`,
      headers: asBrowser(account),
      payload: { invalidateImmediately: true },
    })
    expect(response.statusCode).toBe(200)
    const { secretKey, previousSecretExpiresAt } = response.json<{ secretKey: string; previousSecretExpiresAt: string | null }>()
    expect(secretKey).toMatch(/^tgs_/)
    expect(secretKey).not.toBe(site.secretKey)
    expect(previousSecretExpiresAt).toBeNull()
    const cached = await service.app.siteCache.findBySiteKey(site.siteKey)
    expect(acceptsSecretKey(cached ?? neverSite, secretKey, Date.now())).toBe(true)
    expect(acceptsSecretKey(cached ?? neverSite, site.secretKey, Date.now())).toBe(false)
    const reread = await readSite(site.id)
    expect(reread.body).not.toContain(secretKey)
    expect(reread.json().previousSecretExpiresAt).toBeNull()
  })

  it('answers 503 service_unavailable, not 500, when the database cancels a statement that ran too long', async () => {
    const canceled = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })
    const query = vi.spyOn(service.app.sites, 'listVisibleTo').mockRejectedValueOnce(canceled)
    try {
      const response = await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asScript(account) })
      expect(response.statusCode).toBe(503)
      expect(response.json().error.code).toBe('service_unavailable')
    } finally {
      query.mockRestore()
    }
  })

  it.each([['a deadlock', '40P01'], ['a serialization failure', '40001']])('answers 503 service_unavailable, not 500, when the database ends a transaction for %s', async (_, code) => {
    const conflict = Object.assign(new Error('deadlock detected'), { code })
    const query = vi.spyOn(service.app.sites, 'listVisibleTo').mockRejectedValueOnce(conflict)
    try {
      const response = await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asScript(account) })
      expect(response.statusCode).toBe(503)
      expect(response.json().error).toMatchObject({ code: 'service_unavailable', message: expect.stringContaining('Retry') })
    } finally {
      query.mockRestore()
    }
  })
})

describe.each(deployments)('two deletions of one site at once, on $name', ({ available, options }) => {
  let service: TestApp
  beforeAll(async () => {
    if (available) service = await buildTestApp(options)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  it.skipIf(!available)('answer 204 once and 404 once, as a deletion after the first would', async () => {
    const account = await createTestAccount(service.app)
    for (let round = 0; round < 5; round++) {
      const site = await createTestSite(service.app, account)
      const remove = () => service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}`, headers: asScript(account) })
      const statuses = (await Promise.all([remove(), remove()])).map((response) => response.statusCode)
      expect(statuses.sort()).toEqual([204, 404])
    }
  })
})
