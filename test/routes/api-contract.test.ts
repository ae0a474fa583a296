import { randomUUID } from 'node:crypto'
import { Ajv } from 'ajv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

/*
 * What a client generated from the OpenAPI document, or a contract tester (Prism, Dredd,
 * openapi-response-validator), relies on: the document's schemas accept the answers sent, its
 * credentials are the ones each route takes, a 401 names the scheme, and a query parameter the
 * route does not have is refused rather than ignored.
 */

type Schema = Record<string, unknown>
type Operation = { security?: Record<string, string[]>[]; responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: Schema }> }> }
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  components: { securitySchemes: Record<string, { description?: string }>; schemas: Record<string, Schema> }
}

describe('the OpenAPI document against the dashboard API', () => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  let document: OpenApiDocument
  beforeAll(async () => {
    service = await buildTestApp()
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account)
    document = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<OpenApiDocument>()
  })
  afterAll(() => service.close())

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })))

  it('lists null among the values of every nullable enum, so that strict validators accept the nulls sent', () => {
    const offending: string[] = []
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((each, index) => walk(each, `${at}/${index}`))
      if (typeof node !== 'object' || node === null) return
      const schema = node as { nullable?: unknown; enum?: unknown[] }
      if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null)) offending.push(at)
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`)
    }
    walk(document, '')
    expect(offending).toEqual([])
  })

  it("validates a real log row without a label against the listing's documented schema (Ajv, OpenAPI 3.0's nullable)", async () => {
    await insertVerifications(service.app.database, [{ siteId: site.id, createdAt: new Date(), action: 'allow' }])
    // Ajv takes OpenAPI 3.0's `nullable` as it is; formats are not what is checked here.
    const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true })
    for (const [path, url] of [
      ['/api/v1/sites/{id}/verifications', `/api/v1/sites/${site.id}/verifications`],
      ['/api/v1/verifications', `/api/v1/verifications?reference=${(await firstRowId()).slice(0, 8)}`],
    ] as const) {
      const response = await service.app.inject({ method: 'GET', url, headers: asScript(account) })
      expect(response.statusCode, url).toBe(200)
      const body = response.json<{ items: { label: unknown; labelReason: unknown; labelSource: unknown; decidedBy: unknown }[] }>()
      expect(body.items[0]).toMatchObject({ label: null, labelReason: null, labelSource: null, decidedBy: null })
      // The rows are components.schemas' (#/components/schemas/Verification): beside the schema, for its references.
      const validate = ajv.compile({ ...document.paths[path]?.get?.responses['200']?.content?.['application/json']?.schema, components: { schemas: document.components.schemas } })
      expect(validate(body), `${path}: ${ajv.errorsText(validate.errors)}`).toBe(true)
    }
  })

  const firstRowId = async () =>
    (await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications`, headers: asScript(account) })).json<{ items: { id: string }[] }>().items[0]?.id ?? ''

  it('names the bearer key as the credential of exactly the routes that take one: the others refuse an API key with 403', async () => {
    const dashboard = operations().filter(({ operation }) => (operation.security ?? []).some((each) => 'session' in each))
    expect(dashboard.length).toBeGreaterThan(40)
    const documentedSessionOnly: string[] = []
    const refusingKeys: string[] = []
    for (const { path, method, operation } of dashboard) {
      const name = `${method.toUpperCase()} ${path}`
      if (!(operation.security ?? []).some((each) => 'bearer' in each)) documentedSessionOnly.push(name)
      // Unknown ids: nothing of the account is changed, and a route that takes keys answers 404 or 400.
      const url = path.replace(/\{[^}]+\}/g, () => randomUUID())
      const response = await service.app.inject({ method: method.toUpperCase() as 'GET', url, headers: asScript(account), ...(method === 'get' ? {} : { payload: {} }) })
      if (response.statusCode === 403 && /not an API key/.test(response.json<{ error: { message: string } }>().error.message)) refusingKeys.push(name)
    }
    expect(refusingKeys.sort()).toEqual(documentedSessionOnly.sort())
    expect(documentedSessionOnly).toEqual(expect.arrayContaining(['POST /api/v1/api-keys', 'GET /api/v1/sessions', 'PUT /api/v1/me/password', 'POST /api/v1/sites/{id}/transfer']))
    // The key was not spent on the way: it still reads.
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/me', headers: asScript(account) })).statusCode).toBe(200)
    // The read-only rule is stated once, with the scheme.
    expect(document.components.securitySchemes.bearer?.description).toMatch(/`read` key may only GET.*403 `forbidden`/)
  })

  it('answers every 401 with WWW-Authenticate naming the bearer scheme, as the document says', async () => {
    const challenge = 'Bearer realm="tollgate"'
    const refusals = [
      { method: 'GET', url: '/api/v1/me', headers: {} },
      { method: 'GET', url: '/api/v1/sites', headers: { authorization: `Bearer tgak_${'x'.repeat(43)}` } },
      { method: 'DELETE', url: `/api/v1/sites/${site.id}`, headers: { authorization: 'Basic dXNlcjpwYXNz' } },
      { method: 'GET', url: '/api/v1/audit-log', headers: { cookie: 'tollgate_session=logged-out' } },
      { method: 'POST', url: '/api/v1/sessions', headers: {}, payload: { email: account.email, password: 'not-the-password' } },
    ] as const
    for (const request of refusals) {
      const response = await service.app.inject(request)
      expect(response.statusCode, `${request.method} ${request.url}`).toBe(401)
      expect(response.headers['www-authenticate'], `${request.method} ${request.url}`).toBe(challenge)
    }
    const allowed = await service.app.inject({ method: 'GET', url: '/api/v1/me', headers: asScript(account) })
    expect(allowed.headers['www-authenticate']).toBeUndefined()
    for (const { path, method, operation } of operations().filter(({ operation }) => operation.responses['401'] !== undefined && (operation.security ?? []).some((each) => 'bearer' in each))) {
      expect(operation.responses['401']?.headers, `${method} ${path}`).toHaveProperty('WWW-Authenticate')
    }
  })

  it('states the body limit of a site in its 413 (128 KiB), and the service-wide one elsewhere', () => {
    expect(document.paths['/api/v1/sites']?.post?.responses['413']).toMatchObject({ description: expect.stringContaining('128 KiB') })
    expect(document.paths['/api/v1/sites/{id}']?.put?.responses['413']).toMatchObject({ description: expect.stringContaining('128 KiB') })
    expect(document.paths['/api/v1/api-keys']?.post?.responses['413']).toMatchObject({ description: expect.stringContaining('16 KiB') })
  })

  it.each([
    ['GET', '/api/v1/sites', '?limit=2&cursor=abc', 'limit'],
    ['GET', '/api/v1/sites/{id}', '?foo=1', 'foo'],
    ['GET', '/api/v1/sites/{id}/verifications', '?foo=1', 'foo'],
    ['GET', '/api/v1/verifications', '?reference=12345678&foo=1', 'foo'],
    ['GET', '/api/v1/sites/{id}/stats', '?foo=1', 'foo'],
    ['GET', '/api/v1/sites/{id}/members', '?foo=1', 'foo'],
    ['GET', '/api/v1/sites/{id}/webhook-deliveries', '?foo=1', 'foo'],
    ['GET', '/api/v1/api-keys', '?foo=1', 'foo'],
    ['GET', '/api/v1/audit-log', '?foo=1', 'foo'],
    ['GET', '/api/v1/me', '?foo=1', 'foo'],
    ['GET', '/api/v1/sessions', '?_=1700000000000', '_'],
    ['PUT', '/api/v1/sites/{id}', '?dryRun=true', 'dryRun'],
  ])('%s %s%s answers 400 naming the unknown query parameter', async (method, path, query, parameter) => {
    const url = path.replace('{id}', site.id)
    const headers = path === '/api/v1/sessions' ? asBrowser(account) : asScript(account)
    const payload = method === 'PUT' ? { name: 'Renamed' } : undefined
    const refused = await service.app.inject({ method: method as 'GET', url: `${url}${query}`, headers, payload })
    expect(refused.statusCode, refused.body).toBe(400)
    expect(refused.json().error).toMatchObject({ code: 'validation_error', details: [{ field: `querystring.${parameter}`, message: 'is not a parameter of this route' }] })
    // Without it, the same request goes through.
    const known = query.replace(/[?&](limit|cursor|foo|_|dryRun)=[^&]*/g, '').replace(/^&/, '?')
    const answered = await service.app.inject({ method: method as 'GET', url: `${url}${known}`, headers, payload })
    expect(answered.statusCode, answered.body).toBe(200)
  })

  it("states the new-password rules on the sign-up's password only: the log-in's takes any password an account may hold", () => {
    const passwordDescriptionAt = (path: string) =>
      (document.paths[path]?.post as unknown as { requestBody: { content: { 'application/json': { schema: { properties: { password: { description: string } } } } } } })
        .requestBody.content['application/json'].schema.properties.password.description
    expect(passwordDescriptionAt('/api/v1/accounts')).toContain('not a common password')
    const logIn = passwordDescriptionAt('/api/v1/sessions')
    expect(logIn).not.toContain('not a common password')
    expect(logIn).toContain('still logs in')
  })

  it("documents Turnstile's messages list at its Siteverify path only: reCAPTCHA's and hCaptcha's paths never send it", () => {
    const propertiesAt = (path: string) => {
      const answer = (document.paths[path]?.post as { responses: Record<string, { content: Record<string, { schema: { properties: Record<string, unknown> } }> }> } | undefined)?.responses['200']
      return Object.keys(answer?.content['application/json']?.schema.properties ?? {})
    }
    expect(propertiesAt('/turnstile/v0/siteverify')).toContain('messages')
    for (const path of ['/recaptcha/api/siteverify', '/siteverify', '/api/v1/siteverify']) {
      expect(propertiesAt(path), path).toContain('error-codes')
      expect(propertiesAt(path), path).not.toContain('messages')
    }
  })

  it("leaves the public routes' queries open: vendors' clients send parameters of their own", async () => {
    const response = await service.app.inject({ method: 'POST', url: '/api/v1/challenge?cb=1', headers: { 'x-site-key': site.siteKey, origin: 'http://localhost' } })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toHaveProperty('challenge')
  })
})
