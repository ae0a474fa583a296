import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserHeaders, obtainToken } from '../helpers/core-flow.js'
import { asBrowser, asScript, createTestAccount, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

/**
 * POST /api/v1/sites with an Idempotency-Key: a client whose 201 was lost retries safely, and gets
 * the one-time secret key it never saw instead of a second site. On both deployments: the key's
 * row is written in the site's own transaction, in the system of record.
 */
describe.each(deployments)('creating a site with an Idempotency-Key ($name)', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let other: TestAccount

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, config: { rateLimitPerMinute: 0 } })
    account = await createTestAccount(service.app)
    other = await createTestAccount(service.app)
  })
  afterAll(() => service?.close())

  const create = (key: string | undefined, payload: object, headers = asScript(account)) =>
    service.app.inject({ method: 'POST', url: '/api/v1/sites', headers: { ...headers, ...(key === undefined ? {} : { 'idempotency-key': key }) }, payload })
  const siteIdsOf = async (owner: TestAccount) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asScript(owner) })).json<{ items: { id: string; role: string }[] }>().items.map(({ id }) => id)
  const newKey = () => `retry-${crypto.randomUUID()}`

  it.skipIf(!available)('answers a retry with the first answer, secret key included, and creates one site', async () => {
    const key = newKey()
    const before = await siteIdsOf(account)
    const first = await create(key, { name: 'Shop', domains: ['shop.example.com'] })
    expect(first.statusCode).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    // The same body re-encoded (another key order) is the same request.
    const retry = await create(key, { domains: ['shop.example.com'], name: 'Shop' })
    expect(retry.statusCode).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json()).toEqual(first.json())
    expect(retry.headers.location).toBe(first.headers.location)
    expect(retry.headers.etag).toBe(first.headers.etag)
    // The same account from its browser session: the key belongs to the account, not the credential.
    expect((await create(key, { name: 'Shop', domains: ['shop.example.com'] }, asBrowser(account))).json()).toEqual(first.json())
    const site = first.json<CreatedSite>()
    expect(await siteIdsOf(account)).toEqual([...before, site.id])
    // The replayed secret key redeems the site's tokens at Siteverify.
    const token = await obtainToken(service.app, browserHeaders(site.siteKey))
    const verdict = await service.app.inject({ method: 'POST', url: '/siteverify', payload: { secret: retry.json<CreatedSite>().secretKey, response: token } })
    expect(verdict.json()).toMatchObject({ success: true, 'error-codes': [] })
  })

  it.skipIf(!available)('refuses the key with another body (422 idempotency_key_reused) and creates nothing', async () => {
    const key = newKey()
    expect((await create(key, { name: 'First' })).statusCode).toBe(201)
    const before = await siteIdsOf(account)
    const reused = await create(key, { name: 'Second' })
    expect(reused.statusCode).toBe(422)
    expect(reused.json()).toMatchObject({ error: { code: 'idempotency_key_reused' } })
    expect(await siteIdsOf(account)).toEqual(before)
  })

  it.skipIf(!available)('keeps each account its own keys', async () => {
    const key = newKey()
    const mine = await create(key, { name: 'Shared key' })
    const theirs = await create(key, { name: 'Shared key' }, asScript(other))
    expect(theirs.statusCode).toBe(201)
    expect(theirs.headers['idempotent-replayed']).toBeUndefined()
    expect(theirs.json<CreatedSite>().id).not.toBe(mine.json<CreatedSite>().id)
    expect(await siteIdsOf(other)).toContain(theirs.json<CreatedSite>().id)
  })

  it.skipIf(!available)('creates a site per request without the header, as before', async () => {
    const first = await create(undefined, { name: 'No key' })
    const second = await create(undefined, { name: 'No key' })
    expect([first.statusCode, second.statusCode]).toEqual([201, 201])
    expect(second.json<CreatedSite>().id).not.toBe(first.json<CreatedSite>().id)
  })

  it.skipIf(!available)('makes a retry racing the first request wait for its answer: one site', async () => {
    const key = newKey()
    const before = await siteIdsOf(account)
    const answers = await Promise.all(Array.from({ length: 4 }, () => create(key, { name: 'Raced' })))
    expect(answers.map((answer) => answer.statusCode)).toEqual([201, 201, 201, 201])
    const ids = new Set(answers.map((answer) => answer.json<CreatedSite>().id))
    const secrets = new Set(answers.map((answer) => answer.json<CreatedSite>().secretKey))
    expect([ids.size, secrets.size]).toEqual([1, 1])
    expect(answers.filter((answer) => answer.headers['idempotent-replayed'] === 'true')).toHaveLength(3)
    expect(await siteIdsOf(account)).toEqual([...before, ...ids])
  })

  it.skipIf(!available)('starts afresh with a key older than 24 hours, and the retention sweep deletes such keys', async () => {
    const key = newKey()
    const first = await create(key, { name: 'Old key' })
    await service.app.database.query("UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 minute' WHERE idempotency_key = $1", [key])
    const later = await create(key, { name: 'Old key' })
    expect(later.statusCode).toBe(201)
    expect(later.headers['idempotent-replayed']).toBeUndefined()
    expect(later.json<CreatedSite>().id).not.toBe(first.json<CreatedSite>().id)
    // The key's new first answer is the one replayed from now on.
    expect((await create(key, { name: 'Old key' })).json()).toEqual(later.json())
    const other = newKey()
    await create(other, { name: 'Swept' })
    await service.app.database.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE idempotency_key = $1", [other])
    await service.app.logRetention.sweep()
    expect(await service.app.database.query('SELECT 1 FROM idempotency_keys WHERE idempotency_key = $1', [other])).toEqual([])
    expect(await service.app.database.query('SELECT 1 FROM idempotency_keys WHERE idempotency_key = $1', [key])).toHaveLength(1)
  })

  it.skipIf(!available)('keeps the answer sealed: the stored row shows neither the secret key nor the site key', async () => {
    const key = newKey()
    const site = (await create(key, { name: 'Sealed' })).json<CreatedSite>()
    const rows = await service.app.database.query('SELECT * FROM idempotency_keys WHERE idempotency_key = $1', [key])
    expect(rows).toHaveLength(1)
    const stored = JSON.stringify(rows)
    expect(stored).not.toContain(site.secretKey)
    expect(stored).not.toContain(site.siteKey)
    expect(stored).not.toContain(site.id)
  })

  it.skipIf(!available)('keeps nothing of a refused first request: corrected, the same key creates the site', async () => {
    const key = newKey()
    const refused = await create(key, { name: 'Webhook', settings: { webhookUrl: 'https://hooks.example.com/tollgate' } })
    expect(refused.statusCode).toBe(400)
    const corrected = await create(key, { name: 'Webhook' })
    expect(corrected.statusCode).toBe(201)
    expect(corrected.headers['idempotent-replayed']).toBeUndefined()
  })

  it.skipIf(!available)('does not answer an API key creation from a stored answer: its password is checked every time', async () => {
    // A replay answered before the password check would let a stolen session guess the password
    // against the stored request, without the log-in budgets; so the header is not read there.
    const key = newKey()
    const createKey = (payload: object) =>
      service.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { ...asBrowser(other), 'idempotency-key': key }, payload })
    expect((await createKey({ name: 'deploy', password: other.password })).statusCode).toBe(201)
    const guessed = await createKey({ name: 'deploy', password: 'not the password at all' })
    expect(guessed.statusCode).toBe(400)
    expect(guessed.json()).toMatchObject({ error: { code: 'validation_error', details: [{ field: 'password' }] } })
    expect(guessed.headers['idempotent-replayed']).toBeUndefined()
  })

  it.skipIf(!available)('refuses a key that is empty, too long or not printable ASCII (400 naming the header)', async () => {
    for (const key of ['', 'k'.repeat(256), 'clé']) {
      const response = await create(key, { name: 'Bad key' })
      expect(response.statusCode, JSON.stringify(key)).toBe(400)
      expect(response.json()).toMatchObject({ error: { code: 'validation_error', details: [{ field: 'Idempotency-Key' }] } })
    }
    expect((await create('k'.repeat(255), { name: 'Longest key' })).statusCode).toBe(201)
  })
})

describe('the Idempotency-Key in the OpenAPI document', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp()
  })
  afterAll(() => service.close())

  it('documents the header, the replay header and 422 idempotency_key_reused on POST /api/v1/sites', async () => {
    const document = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>>
    }>()
    const operation = document.paths['/api/v1/sites']?.post
    expect(operation?.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'idempotency-key' }))
    expect(operation?.responses['201']?.headers).toHaveProperty('Idempotent-Replayed')
    expect(operation?.responses['422']?.description).toContain('idempotency_key_reused')
  })
})
