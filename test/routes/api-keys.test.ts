import { createHash, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKeyRepository } from '../../src/storage/sql/api-key-repository.js'
import { asBrowser, asScript, createTestAccount, randomClientAddress, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

interface CreatedKey {
  id: string
  name: string
  prefix: string
  access: 'full' | 'read'
  expiresAt: string | null
  key: string
  createdAt: string
  lastUsedAt: string | null
}
interface KeyList {
  items: Omit<CreatedKey, 'key'>[]
}

const DAY_MS = 86_400_000

describe.each(deployments)('API keys on $name', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let stranger: TestAccount
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp(options)
    account = await createTestAccount(service.app)
    stranger = await createTestAccount(service.app)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  // Each from an address of its own: the password is checked within the log-in's budget of a client.
  const create = (owner: Pick<TestAccount, 'cookie' | 'password'>, payload: object = {}, headers: Record<string, string> = asBrowser(owner)) =>
    service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'CI deploys', password: owner.password, ...payload }, remoteAddress: randomClientAddress() })
  const list = (headers: Record<string, string>) => service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers })
  const revoke = (headers: Record<string, string>, id: string) =>
    service.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers })
  const me = (key: string) => service.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${key}` } })
  const keyCreations = async (owner: TestAccount) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log?action=api_key.created', headers: asBrowser(owner) })).json<{ items: { details: Record<string, unknown> }[] }>().items

  it.skipIf(!available)('creates a key: 201 with the key once, full and never expiring by default; it authenticates as the account', async () => {
    const response = await create(account)
    expect(response.statusCode, response.body).toBe(201)
    const created = response.json<CreatedKey>()
    expect(created).toEqual({
      id: expect.any(String),
      name: 'CI deploys',
      prefix: created.key.slice(0, 12),
      access: 'full',
      siteIds: null,
      allowedAddresses: null,
      expiresAt: null,
      expired: false,
      key: expect.stringMatching(/^tgak_[A-Za-z0-9_-]{43}$/),
      createdAt: expect.any(String),
      lastUsedAt: null,
    })
    const answer = await me(created.key)
    expect(answer.statusCode).toBe(200)
    expect(answer.json<{ id: string }>().id).toBe(account.id)
  })

  it.skipIf(!available)('creates a read key that expires: shown in the answer, the list and the audit event', async () => {
    const owner = await createTestAccount(service.app)
    const expiresAt = new Date(Date.now() + 30 * DAY_MS).toISOString()
    const response = await create(owner, { name: 'monitor', access: 'read', expiresAt })
    expect(response.statusCode, response.body).toBe(201)
    const created = response.json<CreatedKey>()
    expect(created).toMatchObject({ name: 'monitor', access: 'read', expiresAt })
    // Any time zone is read as the instant it names, and answered in UTC.
    const otherZone = (await create(owner, { name: 'other zone', expiresAt: '2099-06-30T14:00:00+02:00' })).json<CreatedKey>()
    expect(otherZone).toMatchObject({ access: 'full', expiresAt: '2099-06-30T12:00:00.000Z' })

    const { items } = (await list(asBrowser(owner))).json<KeyList>()
    expect(items.find((item) => item.id === created.id)).toEqual({
      id: created.id,
      name: 'monitor',
      prefix: created.prefix,
      access: 'read',
      siteIds: null,
      allowedAddresses: null,
      expiresAt,
      expired: false,
      createdAt: created.createdAt,
      lastUsedAt: null,
    })
    expect((await keyCreations(owner)).map((event) => event.details)).toEqual([
      { apiKeyId: otherZone.id, name: 'other zone', prefix: otherZone.prefix, access: 'full', siteIds: null, allowedAddresses: null, expiresAt: '2099-06-30T12:00:00.000Z' },
      { apiKeyId: created.id, name: 'monitor', prefix: created.prefix, access: 'read', siteIds: null, allowedAddresses: null, expiresAt },
      // The helper's key: full, never expiring, for all sites.
      { apiKeyId: expect.any(String), name: 'test key', prefix: expect.any(String), access: 'full', siteIds: null, allowedAddresses: null, expiresAt: null },
    ])
  })

  it.skipIf(!available)('stores only the SHA-256 of the key', async () => {
    const { key, id } = (await create(account)).json<CreatedKey>()
    const [row] = await service.app.database.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [id])
    expect(row?.key_hash).toBe(createHash('sha256').update(key).digest('hex'))
    expect(JSON.stringify(row)).not.toContain(key)
  })

  it.skipIf(!available)("lists the account's keys with prefixes only, and when each was last used", async () => {
    const created = (await create(account, { name: 'listed' })).json<CreatedKey>()
    await me(created.key)
    const response = await list({ cookie: account.cookie })
    expect(response.statusCode).toBe(200)
    const { items } = response.json<KeyList>()
    expect(response.body).not.toContain(created.key)
    const listed = items.find((item) => item.id === created.id)
    expect(listed).toEqual({ id: created.id, name: 'listed', prefix: created.prefix, access: 'full', siteIds: null, allowedAddresses: null, expiresAt: null, expired: false, createdAt: created.createdAt, lastUsedAt: expect.any(String) })
    expect(Object.keys(listed ?? {})).not.toContain('key')
    const strangers = (await list(asScript(stranger))).json<KeyList>().items.map((item) => item.id)
    expect(strangers).not.toContain(created.id)
  })

  it.skipIf(!available)('revokes a key: 204, and the key stops working at once', async () => {
    const created = (await create(account)).json<CreatedKey>()
    const response = await revoke(asBrowser(account), created.id)
    expect(response.statusCode).toBe(204)
    const refused = await me(created.key)
    expect(refused.statusCode).toBe(401)
    expect(refused.json().error.code).toBe('unauthorized')
    expect((await list(asScript(account))).json<KeyList>().items.map((item) => item.id)).not.toContain(created.id)
  })

  it.skipIf(!available)("answers 404 for another account's key, an unknown id and a malformed id, and revokes nothing", async () => {
    const created = (await create(account)).json<CreatedKey>()
    for (const id of [created.id, randomUUID(), 'not-a-uuid']) {
      const response = await revoke(asScript(stranger), id)
      expect(response.statusCode).toBe(404)
      expect(response.json().error.code).toBe('not_found')
    }
    expect((await me(created.key)).statusCode).toBe(200)
  })

  it.skipIf(!available).each([
    { name: '' },
    { name: '   ' },
    { name: 'x'.repeat(101) },
    { name: undefined },
    { extra: 1 },
    { name: '\u200b\u200b' },
    { name: 'ci\u202Etpircs' },
    { name: '\u2800' },
    { name: 'ci\u2028bot' },
    { access: 'write' },
    { access: null },
    { expiresAt: 'tomorrow' },
    { expiresAt: '2099-01-01' },
    { expiresAt: '2099-01-01T00:00:00' },
    { expiresAt: '2099-01-01T00:00:00+01' },
    { expiresAt: 4102444800000 },
    { expiresAt: '10000-01-01T00:00:00Z' },
    { expiresAt: '9999-12-31T23:00:00-05:00' },
    { password: undefined },
    { password: 1 },
    { code: 123456 },
  ])('answers 400 for %j and makes nothing', async (payload) => {
    const before = (await list(asBrowser(account))).json<KeyList>().items.length
    const response = await create(account, payload)
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json().error.code).toBe('validation_error')
    expect((await list(asBrowser(account))).json<KeyList>().items).toHaveLength(before)
  })

  it.skipIf(!available)('refuses an expiry that is not in the future, named beside a wrong password, and makes nothing', async () => {
    const owner = await createTestAccount(service.app)
    const eventsBefore = await keyCreations(owner)
    for (const expiresAt of [new Date(Date.now() - 1_000).toISOString(), '2020-01-01T00:00:00Z']) {
      const response = await create(owner, { expiresAt })
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'expiresAt', message: 'must be in the future' }] })
    }
    // Every problem at once, the password's first.
    const all = await create(owner, { name: ' ', expiresAt: '2020-01-01T00:00:00Z', password: 'not it' })
    expect(all.json().error.details).toEqual([
      { field: 'password', message: 'is not your current password' },
      { field: 'name', message: 'must not be empty' },
      { field: 'expiresAt', message: 'must be in the future' },
    ])
    expect((await list(asBrowser(owner))).json<KeyList>().items.map((item) => item.name)).toEqual(['test key'])
    expect(await keyCreations(owner)).toEqual(eventsBefore)
  })

  it.skipIf(!available)('refuses to create a key with an API key (403 forbidden), whatever it sends: a leaked key cannot leave keys behind it', async () => {
    for (const payload of [{ name: 'minted by a key', password: account.password }, {}]) {
      const refused = await create(account, payload, asScript(account))
      expect(refused.statusCode).toBe(403)
      expect(refused.json().error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('logged-in session') })
    }
    const { items } = (await list(asScript(account))).json<KeyList>()
    expect(items.map((item) => item.name)).not.toContain('minted by a key')
  })

  it.skipIf(!available)('holds at most 100 keys per account: 409 conflict beyond, until one is revoked', async () => {
    const owner = await createTestAccount(service.app)
    // The account holds the key it was set up with (asScript's), 98 more made here, and one through the API.
    const apiKeys = createApiKeyRepository(service.app.database)
    for (let index = 0; index < 98; index++) {
      await apiKeys.create(owner.id, { name: `key ${index}`, prefix: 'tgak_seeded', keyHash: randomUUID(), access: 'full', expiresAt: null }, 100)
    }
    expect((await create(owner)).statusCode).toBe(201)
    const refused = await create(owner)
    expect(refused.statusCode).toBe(409)
    expect(refused.json().error).toMatchObject({ code: 'conflict', message: expect.stringContaining('at most 100') })
    const { items } = (await list(asScript(owner))).json<KeyList>()
    expect(items).toHaveLength(100)
    expect((await revoke(asScript(owner), items[1]?.id ?? '')).statusCode).toBe(204)
    expect((await create(owner)).statusCode).toBe(201)
    // Another account is not affected.
    expect((await create(stranger)).statusCode).toBe(201)
  })

  it.skipIf(!available)('answers 401 on every route without credentials', async () => {
    for (const response of [await create(account, {}, {}), await list({}), await revoke({}, randomUUID())]) {
      expect(response.statusCode).toBe(401)
      expect(response.json().error.code).toBe('unauthorized')
    }
  })

  it.skipIf(!available)('refuses cookie-authenticated creation and revocation without our Origin (403); API keys are exempt', async () => {
    const created = (await create(account)).json<CreatedKey>()
    expect((await create(account, {}, { cookie: account.cookie })).statusCode).toBe(403)
    expect((await create(account, {}, { cookie: account.cookie, origin: 'https://evil.example' })).statusCode).toBe(403)
    expect((await revoke({ cookie: account.cookie }, created.id)).statusCode).toBe(403)
    expect((await me(created.key)).statusCode).toBe(200)
    expect((await revoke(asScript(account), created.id)).statusCode).toBe(204)
  })
})
