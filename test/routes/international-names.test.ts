import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, errorOf } from '../helpers/api-keys.js'
import { asBrowser, asScript, createTestAccount, createTestSite, randomClientAddress, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { addPasskey, createSoftwareAuthenticator } from '../helpers/software-authenticator.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

/** "Café Müller" as macOS and some keyboards send it (each accent a combining mark), and as one character each. */
const DECOMPOSED = 'Cafe\u0301 Mu\u0308ller'
const COMPOSED = 'Caf\u00E9 M\u00FCller'

interface AuditItem {
  action: string
  details: Record<string, unknown>
}

describe.each(deployments)('international names and searches on $name', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, config: { ...options.config, rateLimitPerMinute: 0 } })
    account = await createTestAccount(service.app)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  const auditEvents = async (action: string) =>
    (await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?action=${action}`, headers: asBrowser(account) })).json<{ items: AuditItem[] }>().items
  const readSite = (id: string) => service.app.inject({ method: 'GET', url: `/api/v1/sites/${id}`, headers: asScript(account) })
  const renameSite = (id: string, name: string) => service.app.inject({ method: 'PUT', url: `/api/v1/sites/${id}`, headers: asScript(account), payload: { name } })
  const search = async (query: string) => {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites?q=${query}`, headers: asScript(account) })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ items: CreatedSite[] }>().items.map((site) => site.name)
  }

  it.skipIf(!available)('stores a site name sent decomposed as composed; the same name again in either form writes nothing', async () => {
    const site = await createTestSite(service.app, account, { name: `  ${DECOMPOSED} ` })
    expect(site.name).toBe(COMPOSED)
    const before = await readSite(site.id)
    expect(before.json()).toMatchObject({ name: COMPOSED })

    for (const name of [DECOMPOSED, COMPOSED, ` ${DECOMPOSED}`]) {
      const again = await renameSite(site.id, name)
      expect(again.statusCode, again.body).toBe(200)
      expect(again.headers.etag).toBe(before.headers.etag)
      expect(again.json()).toMatchObject({ name: COMPOSED, updatedAt: before.json<CreatedSite>().updatedAt })
    }
    const updates = async () => (await auditEvents('site.updated')).filter((event) => JSON.stringify(event).includes(site.id))
    expect(await updates()).toEqual([])

    const renamed = await renameSite(site.id, 'Bu\u0308cher Ku\u0308hn')
    expect(renamed.statusCode, renamed.body).toBe(200)
    expect(renamed.json()).toMatchObject({ name: 'B\u00FCcher K\u00FChn' })
    expect(renamed.headers.etag).not.toBe(before.headers.etag)
    expect((await updates()).map((event) => event.details.changes)).toEqual([[{ field: 'name', from: COMPOSED, to: 'B\u00FCcher K\u00FChn' }]])
  })

  it.skipIf(!available)('stores an API key name sent decomposed as composed; a rename to the same name in another form is no change', async () => {
    const key = await createKey(service.app, account, { name: DECOMPOSED })
    expect(key.name).toBe(COMPOSED)
    const edit = (name: string) =>
      service.app.inject({ method: 'PATCH', url: `/api/v1/api-keys/${key.id}`, headers: asBrowser(account), payload: { name }, remoteAddress: randomClientAddress() })
    const same = await edit(`${DECOMPOSED}  `)
    expect(same.statusCode, same.body).toBe(200)
    expect(same.json()).toMatchObject({ name: COMPOSED })
    const forKey = async () => (await auditEvents('api_key.updated')).filter((event) => event.details.apiKeyId === key.id)
    expect(await forKey()).toEqual([])

    expect((await edit('Mu\u0308ller deploy')).json()).toMatchObject({ name: 'M\u00FCller deploy' })
    expect((await forKey()).map((event) => event.details.changes)).toEqual([[{ field: 'name', from: COMPOSED, to: 'M\u00FCller deploy' }]])
  })

  it.skipIf(!available)('stores a passkey name sent decomposed as composed; a rename to the same name in another form is no change', async () => {
    const added = await addPasskey(service.app, account, createSoftwareAuthenticator(), { name: DECOMPOSED })
    expect(added.statusCode, added.body).toBe(201)
    const passkey = added.json<{ id: string; name: string }>()
    expect(passkey.name).toBe(COMPOSED)
    const rename = (name: string) => service.app.inject({ method: 'PUT', url: `/api/v1/me/passkeys/${passkey.id}`, headers: asBrowser(account), payload: { name } })
    const same = await rename(DECOMPOSED)
    expect(same.statusCode, same.body).toBe(200)
    expect(same.json()).toMatchObject({ name: COMPOSED })
    const renames = async () => (await auditEvents('account.passkey_renamed')).filter((event) => event.details.passkeyId === passkey.id)
    expect(await renames()).toEqual([])
    expect((await rename('Te\u0301le\u0301phone')).json()).toMatchObject({ name: 'T\u00E9l\u00E9phone' })
    expect((await renames()).map((event) => event.details)).toEqual([{ passkeyId: passkey.id, from: COMPOSED, to: 'T\u00E9l\u00E9phone' }])
  })

  it.skipIf(!available)('finds a site by its domain in Unicode or in punycode, and by its name in any case or Unicode form', async () => {
    const searcher = await createTestAccount(service.app)
    const books = await createTestSite(service.app, searcher, { name: 'Books', domains: ['b\u00FCcher.example'] })
    // Stored as browsers send it in Origin.
    expect(books.domains).toEqual(['xn--bcher-kva.example'])
    await createTestSite(service.app, searcher, { name: COMPOSED, domains: ['shop.example'] })
    await createTestSite(service.app, searcher, { name: 'Bucher plain', domains: ['bucher.example'] })
    const found = async (query: string) => {
      const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites?q=${query}&sort=name`, headers: asScript(searcher) })
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{ items: CreatedSite[] }>().items.map((site) => site.name)
    }
    expect(await found(encodeURIComponent('b\u00FCcher'))).toEqual(['Books'])
    expect(await found(encodeURIComponent('BU\u0308CHER.EXAMPLE'))).toEqual(['Books'])
    expect(await found('xn--bcher-kva')).toEqual(['Books'])
    expect(await found('bucher')).toEqual(['Bucher plain'])
    expect(await found(encodeURIComponent('cafe\u0301 m\u00FC'))).toEqual([COMPOSED])
    expect(await found(encodeURIComponent('\uFF23\uFF21\uFF26\u00C9'))).toEqual([COMPOSED])
    expect(await found('')).toHaveLength(3)
    // The account's own sites only: the first test's account sees none of these.
    expect(await search(encodeURIComponent('b\u00FCcher'))).not.toContain('Books')
  })

  it.skipIf(!available)('answers 400 validation_error to a querystring whose %-escapes are not UTF-8, on every route of the dashboard API', async () => {
    const site = await createTestSite(service.app, account, { name: 'Escapes' })
    const document = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, Record<string, { tags?: string[] }>>
    }>()
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => operation.tags?.includes('dashboard') === true)
        .map(([method]) => ({ path, method: method.toUpperCase() as 'GET' })),
    )
    expect(operations.length).toBeGreaterThan(30)
    const answers: string[] = []
    for (const { path, method } of operations) {
      for (const [query, field] of [['q=%C3%28', 'querystring.q'], ['from=%FF', 'querystring.from'], ['%E9=1', 'querystring']] as const) {
        const response = await service.app.inject({
          method,
          url: `${path.replace(/\{[^}]+\}/g, site.id)}?${query}`,
          headers: asBrowser(account),
          remoteAddress: randomClientAddress(),
        })
        const error = response.statusCode === 400 ? errorOf(response) : undefined
        answers.push(`${method} ${path} ?${query}: ${response.statusCode} ${error?.code ?? ''} ${error?.details?.map((detail) => detail.field).join() ?? ''}`)
        expect(answers.at(-1)).toBe(`${method} ${path} ?${query}: 400 validation_error ${field}`)
      }
    }
    // Nothing was changed or deleted on the way.
    expect((await readSite(site.id)).statusCode).toBe(200)
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/me', headers: asScript(account) })).statusCode).toBe(200)
  })

  it.skipIf(!available)('still reads UTF-8 escapes, raw text and a % that begins no escape; asks who is calling before reading the query', async () => {
    await createTestSite(service.app, account, { name: '100% b\u00FCcher' })
    expect(await search('100%25%20b%C3%BCcher')).toEqual(['100% b\u00FCcher'])
    expect(await search('100%')).toEqual(['100% b\u00FCcher'])
    const unauthenticated = await service.app.inject({ method: 'GET', url: '/api/v1/sites?q=%FF' })
    expect(unauthenticated.statusCode).toBe(401)
    expect(errorOf(unauthenticated).code).toBe('unauthorized')
    const refused = await service.app.inject({ method: 'GET', url: '/api/v1/sites?q=%FF', headers: asScript(account) })
    expect(refused.statusCode).toBe(400)
    expect(errorOf(refused)).toMatchObject({ code: 'validation_error', details: [{ field: 'querystring.q', message: 'has a %-escape that does not decode to UTF-8' }] })
  })
})
