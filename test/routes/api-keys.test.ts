import { createHash, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestAccount, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

interface CreatedKey {
  id: string
  name: string
  prefix: string
  key: string
  createdAt: string
  lastUsedAt: string | null
}
interface KeyList {
  items: Omit<CreatedKey, 'key'>[]
}

describe('API keys', () => {
  let service: TestApp
  let account: TestAccount
  let stranger: TestAccount
  beforeAll(async () => {
    service = await buildTestApp()
    account = await createTestAccount(service.app)
    stranger = await createTestAccount(service.app)
  })
  afterAll(() => service.close())

  const create = (headers: Record<string, string>, payload: object = { name: 'CI deploys' }) =>
    service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload })
  const list = (headers: Record<string, string>) => service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers })
  const revoke = (headers: Record<string, string>, id: string) =>
    service.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, headers })
  const me = (key: string) => service.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${key}` } })

  it('creates a key: 201 with the key once; it authenticates as the account', async () => {
    const response = await create(asBrowser(account))
    expect(response.statusCode).toBe(201)
    const created = response.json<CreatedKey>()
    expect(created).toEqual({
      id: expect.any(String),
      name: 'CI deploys',
      prefix: created.key.slice(0, 12),
      key: expect.stringMatching(/^tgak_[A-Za-z0-9_-]{43}$/),
      createdAt: expect.any(String),
      lastUsedAt: null,
    })
    const answer = await me(created.key)
    expect(answer.statusCode).toBe(200)
    expect(answer.json<{ id: string }>().id).toBe(account.id)
  })

  it('stores only the SHA-256 of the key', async () => {
    const { key, id } = (await create(asBrowser(account))).json<CreatedKey>()
    const [row] = await service.app.database.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [id])
    expect(row?.key_hash).toBe(createHash('sha256').update(key).digest('hex'))
    expect(JSON.stringify(row)).not.toContain(key)
  })

  it("lists the account's keys with prefixes only, and when each was last used", async () => {
    const created = (await create(asBrowser(account), { name: 'listed' })).json<CreatedKey>()
    await me(created.key)
    const response = await list({ cookie: account.cookie })
    expect(response.statusCode).toBe(200)
    const { items } = response.json<KeyList>()
    expect(response.body).not.toContain(created.key)
    const listed = items.find((item) => item.id === created.id)
    expect(listed).toEqual({ id: created.id, name: 'listed', prefix: created.prefix, createdAt: created.createdAt, lastUsedAt: expect.any(String) })
    expect(Object.keys(listed ?? {})).not.toContain('key')
    const strangers = (await list(asScript(stranger))).json<KeyList>().items.map((item) => item.id)
    expect(strangers).not.toContain(created.id)
  })

  it('revokes a key: 204, and the key stops working at once', async () => {
    const created = (await create(asBrowser(account))).json<CreatedKey>()
    const response = await revoke(asBrowser(account), created.id)
    expect(response.statusCode).toBe(204)
    const refused = await me(created.key)
    expect(refused.statusCode).toBe(401)
    expect(refused.json().error.code).toBe('unauthorized')
    expect((await list(asScript(account))).json<KeyList>().items.map((item) => item.id)).not.toContain(created.id)
  })

  it("answers 404 for another account's key, an unknown id and a malformed id, and revokes nothing", async () => {
    const created = (await create(asBrowser(account))).json<CreatedKey>()
    for (const id of [created.id, randomUUID(), 'not-a-uuid']) {
      const response = await revoke(asScript(stranger), id)
      expect(response.statusCode).toBe(404)
      expect(response.json().error.code).toBe('not_found')
    }
    expect((await me(created.key)).statusCode).toBe(200)
  })

  it.each([{ name: '' }, { name: '   ' }, { name: 'x'.repeat(101) }, {}, { name: 'ok', extra: 1 }, { name: '\u200b\u200b' }, { name: 'ci\u202Etpircs' }, { name: '\u2800' }, { name: 'ci\u2028bot' }])('answers 400 for %j', async (payload) => {
    const response = await create(asBrowser(account), payload)
    expect(response.statusCode).toBe(400)
    expect(response.json().error.code).toBe('validation_error')
  })

  it('refuses to create a key with an API key (403 forbidden): a leaked key cannot leave keys behind it', async () => {
    const refused = await create(asScript(account), { name: 'minted by a key' })
    expect(refused.statusCode).toBe(403)
    expect(refused.json().error.code).toBe('forbidden')
    const { items } = (await list(asScript(account))).json<KeyList>()
    expect(items.map((item) => item.name)).not.toContain('minted by a key')
  })

  it('holds at most 100 keys per account: 409 conflict beyond, until one is revoked', async () => {
    const owner = await createTestAccount(service.app)
    // The account holds the key it was set up with (asScript's) and 99 more.
    for (let index = 0; index < 99; index++) expect((await create(asBrowser(owner), { name: `key ${index}` })).statusCode).toBe(201)
    const refused = await create(asBrowser(owner))
    expect(refused.statusCode).toBe(409)
    expect(refused.json().error).toMatchObject({ code: 'conflict', message: expect.stringContaining('at most 100') })
    const { items } = (await list(asScript(owner))).json<KeyList>()
    expect(items).toHaveLength(100)
    expect((await revoke(asScript(owner), items[1]?.id ?? '')).statusCode).toBe(204)
    expect((await create(asBrowser(owner))).statusCode).toBe(201)
    // Another account is not affected.
    expect((await create(asBrowser(stranger))).statusCode).toBe(201)
  })

  it('answers 401 on every route without credentials', async () => {
    for (const response of [await create({}), await list({}), await revoke({}, randomUUID())]) {
      expect(response.statusCode).toBe(401)
      expect(response.json().error.code).toBe('unauthorized')
    }
  })

  it('refuses cookie-authenticated creation and revocation without our Origin (403); API keys are exempt', async () => {
    const created = (await create(asBrowser(account))).json<CreatedKey>()
    expect((await create({ cookie: account.cookie })).statusCode).toBe(403)
    expect((await create({ cookie: account.cookie, origin: 'https://evil.example' })).statusCode).toBe(403)
    expect((await revoke({ cookie: account.cookie }, created.id)).statusCode).toBe(403)
    expect((await me(created.key)).statusCode).toBe(200)
    expect((await revoke(asScript(account), created.id)).statusCode).toBe(204)
  })
})
