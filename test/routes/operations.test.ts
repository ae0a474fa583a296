import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestSite } from '../helpers/core-flow.js'
import { asBrowser, createTestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

describe('operational endpoints', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp()
  })
  afterAll(() => service.close())

  it('GET /health answers 200 {"status":"ok"}', async () => {
    const response = await service.app.inject({ method: 'GET', url: '/health' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ status: 'ok' })
  })

  it('GET /metrics with METRICS_TOKEN set answers only requests that carry it as a bearer token', async () => {
    const token = 'a-random-metrics-token-of-some-length'
    const guarded = await buildTestApp({ config: { metricsToken: token } })
    try {
      const scrape = (authorization?: string) =>
        guarded.app.inject({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } })
      for (const refused of [undefined, 'Bearer', `Bearer ${token}x`, `Basic ${token}`, `Bearer ${token.slice(0, -1)}`]) {
        const response = await scrape(refused)
        expect(response.statusCode, String(refused)).toBe(401)
        expect(response.json().error.code).toBe('unauthorized')
        expect(response.headers['www-authenticate']).toBe('Bearer')
        expect(response.body).not.toContain('tollgate_')
      }
      const allowed = await scrape(`Bearer ${token}`)
      expect(allowed.statusCode).toBe(200)
      expect(allowed.body).toContain('# TYPE tollgate_challenges_issued_total')
    } finally {
      await guarded.close()
    }
  })

  it('GET /ready names each dependency and its state', async () => {
    const response = await service.app.inject({ method: 'GET', url: '/ready' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({
      status: 'ok',
      checks: { database: { status: 'up', kind: 'pglite' }, redis: { status: 'up', kind: 'memory' } },
    })
  })

  it('GET /metrics serves Prometheus text with the business counters', async () => {
    const response = await service.app.inject({ method: 'GET', url: '/metrics' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/plain/)
    for (const name of [
      'tollgate_challenges_issued_total',
      'tollgate_verifications_total',
      'tollgate_siteverify_total',
      'tollgate_webhook_deliveries_total',
      'http_request_duration_seconds',
      'process_cpu_seconds_total',
    ]) {
      expect(response.body).toContain(`# TYPE ${name}`)
    }
  })

  it('GET /docs serves Swagger UI and /docs/json the OpenAPI 3 document', async () => {
    const ui = await service.app.inject({ method: 'GET', url: '/docs/' })
    expect(ui.statusCode).toBe(200)
    expect(ui.body).toContain('swagger')
    // A title that names the page (WCAG 2.4.2), and no top bar with an unlabelled logo, address field and select.
    expect(ui.body).toContain('<title>Tollgate API reference</title>')
    const initializer = await service.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })
    expect(initializer.body).toMatch(/"layout":\s*"BaseLayout"/)
    const document = await service.app.inject({ method: 'GET', url: '/docs/json' })
    expect(document.statusCode).toBe(200)
    expect(document.json()).toMatchObject({ openapi: expect.stringMatching(/^3\./), paths: { '/health': {}, '/ready': {} } })
  })

  it("names the project's license, and documents the gate's page as the HTML answer it is", async () => {
    type Answer = { description: string; content?: Record<string, { schema: { type?: string } }> }
    const document = (await service.app.inject({ method: 'GET', url: '/docs/json' }))
      .json<{ info: { license?: { name: string } }; paths: Record<string, Record<string, { responses: Record<string, Answer> }>> }>()
    const { license } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { license: string }
    expect(document.info.license?.name).toBe(license)
    for (const path of ['/gate/v1/page', '/gate/v1/check']) {
      const refused = document.paths[path]?.get?.responses['403']
      expect(refused?.content?.['text/html']?.schema.type, path).toBe('string')
      // The error envelope itself, not an allOf of it alone (Redocly's no-illogical-composition-keywords).
      expect(refused?.content?.['application/json']?.schema, path).toEqual({ $ref: '#/components/schemas/ApiError' })
      expect(refused?.description, path).toContain('`clearance_required`')
    }
    // The page has no 2xx: its description tells a generated client that the 403 is its answer, read as text.
    const pageOperation = document.paths['/gate/v1/page']?.get as unknown as { description: string; responses: Record<string, unknown> }
    expect(Object.keys(pageOperation.responses).filter((status) => status.startsWith('2'))).toEqual([])
    expect(pageOperation.description).toMatch(/403 is its normal answer.*reads its body as text/)
    // What the page route answers is the page, as documented (a 403: nginx's error_page serves it).
    const site = await createTestSite(service.app)
    const page = await service.app.inject({ method: 'GET', url: `/gate/v1/page?sitekey=${site.siteKey}`, headers: { accept: 'text/html' } })
    expect(page.statusCode).toBe(403)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    const json = await service.app.inject({ method: 'GET', url: `/gate/v1/page?sitekey=${site.siteKey}` })
    expect(json.statusCode).toBe(403)
    expect(json.json().error.code).toBe('clearance_required')
  })

  it('tells browsers not to sniff any answer (X-Content-Type-Options: nosniff): API JSON, errors, /docs, /metrics and the pages alike', async () => {
    const requests = [
      { method: 'GET', url: '/health' },
      { method: 'GET', url: '/api/v1/me' },
      { method: 'POST', url: '/api/v1/sessions', payload: { email: 'x' } },
      { method: 'GET', url: '/api/v1/no-such-route' },
      { method: 'GET', url: '/docs/' },
      { method: 'GET', url: '/docs/json' },
      { method: 'GET', url: '/metrics' },
    ] as const
    const answers = await Promise.all(requests.map((request) => service.app.inject(request)))
    expect(answers.map((answer, index) => [requests[index]?.url, answer.statusCode, answer.headers['x-content-type-options']])).toEqual([
      ['/health', 200, 'nosniff'],
      ['/api/v1/me', 401, 'nosniff'],
      ['/api/v1/sessions', 400, 'nosniff'],
      ['/api/v1/no-such-route', 404, 'nosniff'],
      ['/docs/', 200, 'nosniff'],
      ['/docs/json', 200, 'nosniff'],
      ['/metrics', 200, 'nosniff'],
    ])
  })

  it('documents the error answers of every route, with the codes each status carries', async () => {
    type Operation = { tags?: string[]; responses: Record<string, { description: string }> }
    const { paths } = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, Record<string, Operation>> }>()
    const operations = Object.entries(paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })))
    // /health reads nothing and answers 200 always; Siteverify answers every failure with its own 200.
    expect(Object.keys(paths['/health']?.get?.responses ?? {})).toEqual(['200'])
    const failing = operations.filter(({ path, operation }) => path !== '/health' && !(operation.tags ?? []).includes('server-side'))
    for (const { path, method, operation } of failing) {
      const statuses = Object.keys(operation.responses)
      expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['500', '503', ...(method === 'post' ? ['413'] : [])]))
      for (const status of statuses.filter((status) => Number(status) >= 400)) {
        expect(operation.responses[status]?.description, `${method} ${path} ${status}`).toMatch(/`[a-z_]+`/)
      }
    }
    // A route that validates a body answers 400 validation_error: the log-in did not say so.
    expect(paths['/api/v1/sessions']?.post?.responses['400']?.description).toContain('`validation_error`')
    expect(paths['/api/v1/challenge']?.post?.responses['503']?.description).toContain('`service_unavailable`')
    // The challenge ignores any body within the limit: no 400 for it, 413 beyond, and 415 for a
    // Content-Type that is no media type, which Fastify refuses before any route (answered below).
    expect(Object.keys(paths['/api/v1/challenge']?.post?.responses ?? {})).toEqual(expect.arrayContaining(['413', '415']))
    expect(Object.keys(paths['/api/v1/challenge']?.post?.responses ?? {})).not.toContain('400')
    // A site's update names its ETag and refuses a stale If-Match with 412.
    const update = paths['/api/v1/sites/{id}']?.put as unknown as { parameters: { in: string; name: string }[]; responses: Record<string, { description: string; headers?: object }> }
    expect(update.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: 'if-match' }))
    expect(update.responses['412']?.description).toContain('`precondition_failed`')
    expect(update.responses['200']?.headers).toHaveProperty('ETag')
    expect((paths['/api/v1/sites']?.post?.responses['201'] as { headers?: object }).headers).toHaveProperty('Location')
    // Request bodies state the limits the handlers check, for generated clients to check first.
    type Schema = { properties: Record<string, Schema & { minimum?: number; maximum?: number; minLength?: number; maxLength?: number; maxItems?: number; anyOf?: Schema[] }> }
    const bodyOf = (path: string, method: string) =>
      (paths[path]?.[method] as unknown as { requestBody: { content: { 'application/json': { schema: Schema } } } }).requestBody.content['application/json'].schema
    const created = bodyOf('/api/v1/sites', 'post')
    expect(created.properties.name).toMatchObject({ minLength: 1, maxLength: 100 })
    expect(created.properties.domains).toMatchObject({ maxItems: 100 })
    const difficulty = bodyOf('/api/v1/sites/{id}', 'put').properties.settings!.properties.difficulty!
    expect(difficulty.anyOf ?? [difficulty]).toContainEqual(expect.objectContaining({ type: 'integer', minimum: 1, maximum: 32 }))
    expect(bodyOf('/api/v1/accounts', 'post').properties.password).toMatchObject({ minLength: 10, maxLength: 256 })
    // /ready's 503 carries the readiness body, not the error body.
    expect(paths['/ready']?.get?.responses['503']?.description).toMatch(/^Not ready: this body/)
    // Siteverify answers every failure with 200 and its own body.
    expect(Object.keys(paths['/api/v1/siteverify']?.post?.responses ?? {})).toEqual(['200'])
    // A DELETE that takes a body (the account's, with the password) can be refused for it.
    expect(Object.keys(paths['/api/v1/me']?.delete?.responses ?? {})).toEqual(expect.arrayContaining(['400', '413', '415']))
    // Each status lists the codes the route can give, not every code of the status: the shared
    // ApiError narrowed to them.
    type ErrorBody = { allOf: [{ $ref: string }, { properties: { error: { properties: { code: { enum: string[] } } } } }] }
    const codesOf = (path: string, method: string, status: string) => {
      const { allOf } = (paths[path]?.[method]?.responses[status] as unknown as { content: { 'application/json': { schema: ErrorBody } } }).content['application/json'].schema
      expect(allOf[0], `${method} ${path} ${status}`).toEqual({ $ref: '#/components/schemas/ApiError' })
      return allOf[1].properties.error.properties.code.enum
    }
    expect(codesOf('/api/v1/accounts', 'post', '400')).toEqual(['validation_error'])
    expect(codesOf('/api/v1/accounts', 'post', '409')).toEqual(['conflict', 'email_taken'])
    expect(codesOf('/api/v1/me', 'get', '401')).toEqual(['unauthorized'])
    expect(codesOf('/api/v1/sites/{id}/webhook/test', 'post', '409')).toEqual(['conflict', 'webhook_not_configured'])
    expect(codesOf('/api/v1/sites/{id}/webhook-deliveries/{deliveryId}/redeliver', 'post', '409')).toEqual(['conflict', 'webhook_not_configured', 'webhook_event_not_redeliverable'])
    expect(codesOf('/api/v1/sites/{id}/webhook-deliveries/{deliveryId}/redeliver', 'post', '410')).toEqual(['webhook_event_expired'])
    expect(codesOf('/api/v1/verify', 'post', '400')).toEqual(['validation_error', 'challenge_invalid', 'challenge_expired', 'solution_invalid'])
    expect(codesOf('/api/v1/sessions', 'post', '401')).toEqual(['unauthorized', 'invalid_credentials', 'two_factor_required', 'two_factor_invalid'])
    expect(codesOf('/api/v1/sessions', 'post', '403')).toContain('account_disabled')
    expect(codesOf('/api/v1/sessions/passkey', 'post', '403')).toContain('account_disabled')
    // An API key for some sites only: refused a site's creation, and a foreign site id at its making.
    expect(codesOf('/api/v1/sites', 'post', '403')).toContain('api_key_site_restricted')
    expect(codesOf('/api/v1/sites/{id}', 'put', '403')).not.toContain('api_key_site_restricted')
    expect(codesOf('/api/v1/api-keys', 'post', '400')).toEqual(['validation_error', 'api_key_site_not_found'])
    // A key used from an address its list does not hold: on the routes an API key reaches, not on log-in or the gate.
    for (const [path, method] of [['/api/v1/sites', 'get'], ['/api/v1/sites/{id}', 'put'], ['/api/v1/audit-log', 'get'], ['/api/v1/sessions', 'get']] as const) {
      expect(codesOf(path, method, '403'), `${method} ${path}`).toContain('api_key_address_refused')
    }
    for (const [path, method] of [['/api/v1/sessions', 'post'], ['/api/v1/accounts', 'post'], ['/gate/v1/clearance', 'post']] as const) {
      expect(codesOf(path, method, '403'), `${method} ${path}`).not.toContain('api_key_address_refused')
    }
    // An edit of a key: a widening by a key, and an expired key, have codes of their own.
    expect(codesOf('/api/v1/api-keys/{id}', 'patch', '400')).toEqual(['validation_error', 'api_key_site_not_found'])
    expect(codesOf('/api/v1/api-keys/{id}', 'patch', '403')).toContain('api_key_widening_forbidden')
    expect(codesOf('/api/v1/api-keys/{id}', 'patch', '409')).toEqual(['conflict', 'api_key_expired'])
    // A status the route does not declare names the one code it can carry.
    expect(paths['/sdk/v1/{file}']?.get?.responses['400']?.description).toBe('Error body `{ error: { code, message, requestId, details? } }`; `error.code` is `validation_error`')
    // The public routes' gate answers one code per status, not the dashboard's codes of the same status.
    for (const path of ['/api/v1/challenge', '/api/v1/verify']) {
      const responses = paths[path]?.post?.responses
      expect(responses?.['401']?.description, path).toMatch(/is `invalid_site_key`$/)
      expect(responses?.['403']?.description, path).toMatch(/is `origin_not_allowed`$/)
      expect(responses?.['429']?.description, path).toMatch(/is `rate_limited`$/)
    }
  })

  it('composes no schema of a single member: an error body with no codes of its own is ApiError itself', async () => {
    const document = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<object>()
    const lone: string[] = []
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((each, index) => walk(each, `${at}/${index}`))
      if (typeof node !== 'object' || node === null) return
      for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
        const members = (node as Record<string, unknown>)[keyword]
        if (Array.isArray(members) && members.length < 2) lone.push(`${at}/${keyword}`)
      }
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`)
    }
    walk(document, '')
    expect(lone).toEqual([])
  })

  it("documents createAssessment's credential, the site's secret key, as the three alternatives the route takes", async () => {
    type Scheme = { type: string; in?: string; name?: string; scheme?: string; description?: string }
    type Operation = { security?: Record<string, string[]>[]; parameters?: { in: string; name: string }[]; responses: Record<string, { description?: string }> }
    const document = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, Record<string, Operation>>
      components: { securitySchemes: Record<string, Scheme> }
    }>()
    const operation = document.paths['/v1/projects/{project}/assessments']?.post
    const alternatives = operation?.security ?? []
    // Any one of them: each requirement names one scheme.
    expect(alternatives.length).toBe(3)
    expect(alternatives.every((requirement) => Object.keys(requirement).length === 1)).toBe(true)
    const schemes = alternatives.map((requirement) => document.components.securitySchemes[Object.keys(requirement)[0]!])
    expect(schemes).toEqual([
      expect.objectContaining({ type: 'apiKey', in: 'query', name: 'key' }),
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Goog-Api-Key' }),
      expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    ])
    for (const scheme of schemes) expect(scheme?.description).toMatch(/secret key \(tgs_/)
    // The query's key is the scheme's, not a parameter beside it (a generated client would send it twice).
    expect(operation?.parameters?.filter((parameter) => parameter.in === 'query')).toEqual([])
    expect(operation?.responses['403']?.description).toMatch(/PERMISSION_DENIED/)

    // A client that sends the key as each scheme says is answered; one that sends none gets the documented 403.
    const body = { event: { token: 'XXXX.DUMMY.TOKEN.XXXX' } }
    const secret = '1x0000000000000000000000000000000AA'
    const sent = schemes.map((scheme) =>
      scheme?.in === 'query'
        ? { url: `/v1/projects/p/assessments?${scheme.name}=${secret}`, headers: {} }
        : { url: '/v1/projects/p/assessments', headers: scheme?.in === 'header' ? { [scheme.name!]: secret } : { authorization: `Bearer ${secret}` } },
    )
    for (const { url, headers } of sent) {
      const answer = await service.app.inject({ method: 'POST', url, headers, payload: body })
      expect(answer.statusCode, JSON.stringify(headers)).toBe(200)
      expect(answer.json().tokenProperties.valid).toBe(true)
    }
    expect((await service.app.inject({ method: 'POST', url: '/v1/projects/p/assessments', payload: body })).statusCode).toBe(403)
  })

  it('answers the 415 it documents for the public routes, and 405 with the documented methods on every documented path', async () => {
    type Operation = { responses: Record<string, { description: string }> }
    const { paths, info } = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, Record<string, Operation>>; info: { description: string } }>()
    const { siteKey } = await createTestSite(service.app)
    for (const path of ['/api/v1/challenge', '/api/v1/verify']) {
      expect(paths[path]?.post?.responses['415']?.description, path).toContain('`unsupported_media_type`')
      for (const contentType of ['text', ';;;']) {
        const refused = await service.app.inject({ method: 'POST', url: path, headers: { 'x-site-key': siteKey, 'content-type': contentType }, payload: 'x' })
        expect(refused.statusCode, `${path} ${contentType}`).toBe(415)
        expect(refused.json().error.code).toBe('unsupported_media_type')
      }
    }
    // 405 belongs to no operation: the document's description says it, with the Allow header.
    expect(info.description).toMatch(/405 `method_not_allowed`.*`Allow`.*Siteverify paths \(`Allow: POST, GET`/)
    // Allow names the methods of every documented path the URL matches (/sessions/current is a
    // /sessions/{id} too), with HEAD beside GET except on Siteverify and the exports.
    const patternOf = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`)
    const probes = ['PATCH', 'PUT', 'DELETE', 'POST', 'GET'] as const
    for (const path of Object.keys(paths)) {
      const url = path.replace(/\{[^}]+\}/g, '0b0e6c4e-3f3c-4a7e-9d38-6a3e5d1f8c11')
      const documented = Object.entries(paths).filter(([other]) => patternOf(other).test(url)).flatMap(([, operations]) => Object.keys(operations).map((method) => method.toUpperCase()))
      const method = probes.find((each) => !documented.includes(each))!
      const response = await service.app.inject({ method, url, headers: { 'x-site-key': siteKey } })
      expect(response.statusCode, `${method} ${path}`).toBe(405)
      expect(response.json().error.code).toBe('method_not_allowed')
      const takesHead = documented.includes('GET') && !path.endsWith('/siteverify') && !path.endsWith('/export')
      const expected = new Set([...documented, ...(takesHead ? ['HEAD'] : [])])
      expect(new Set(response.headers.allow?.toString().split(', ')), `${method} ${path}`).toEqual(expected)
    }
    // Siteverify takes no HEAD: it would spend the token and show nobody the answer.
    for (const path of ['/api/v1/siteverify', '/siteverify', '/turnstile/v0/siteverify', '/recaptcha/api/siteverify']) {
      const head = await service.app.inject({ method: 'HEAD', url: path })
      expect(head.statusCode, path).toBe(405)
      expect(head.headers.allow, path).toBe('POST, GET')
    }
  })

  it('gives a client generator what it needs: operation ids, optional bodies, the headers of answers, the session\'s Origin rule', async () => {
    type Operation = {
      operationId?: string
      security?: unknown[]
      requestBody?: { required?: boolean; content: Record<string, { example?: unknown; schema?: unknown }> }
      responses: Record<string, { headers?: Record<string, { schema: { type: string } }> }>
    }
    const document = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, Record<string, Operation>>
      components: { securitySchemes: Record<string, { description?: string }>; schemas: Record<string, unknown> }
    }>()
    const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })))
    const ids = operations.map(({ operation }) => operation.operationId)
    expect(ids.every((id) => typeof id === 'string' && /^[a-z]+[A-Za-z0-9]*$/.test(id))).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    expect(document.paths['/api/v1/sites/{id}/secret/rotate']?.post?.operationId).toBe('postSitesByIdSecretRotate')
    // Every operation states its credentials, none included.
    expect(operations.filter(({ operation }) => operation.security === undefined)).toEqual([])
    expect(document.paths['/api/v1/siteverify']?.post?.security).toEqual([])

    // Bodies the routes take or leave: rotation without one keeps the grace period, and Try it out offers that.
    const rotate = document.paths['/api/v1/sites/{id}/secret/rotate']?.post
    expect(rotate?.requestBody?.required).toBe(false)
    expect(JSON.stringify(rotate?.requestBody?.content)).toContain('"invalidateImmediately":false')
    for (const path of ['/api/v1/siteverify', '/siteverify', '/turnstile/v0/siteverify', '/recaptcha/api/siteverify']) {
      expect(document.paths[path]?.post?.requestBody?.required, path).toBe(false)
    }
    expect(document.paths['/api/v1/sites']?.post?.requestBody?.required).toBe(true)
    const account = await createTestAccount(service.app)
    // What Try it out sends for a site and its webhook works as it stands.
    const exampleOf = (path: string, method: string) => Object.values(document.paths[path]?.[method]?.requestBody?.content ?? {})[0]?.example
    const created = await service.app.inject({ method: 'POST', url: '/api/v1/sites', headers: asBrowser(account), payload: exampleOf('/api/v1/sites', 'post') as object })
    expect(created.statusCode, created.body).toBe(201)
    const updated = await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${created.json<{ id: string }>().id}`, headers: asBrowser(account), payload: exampleOf('/api/v1/sites/{id}', 'put') as object })
    expect(updated.statusCode, updated.body).toBe(200)

    // Every 429 says when to come back; log-in sets its cookies, log-out clears the session's.
    for (const { path, method, operation } of operations.filter(({ operation }) => operation.responses['429'] !== undefined)) {
      expect(operation.responses['429']?.headers?.['Retry-After']?.schema.type, `${method} ${path}`).toBe('integer')
    }
    expect(document.paths['/api/v1/sessions']?.post?.responses['200']?.headers?.['Set-Cookie']).toBeDefined()
    expect(document.paths['/api/v1/sessions']?.delete?.responses['204']?.headers?.['Set-Cookie']).toBeDefined()
    expect(document.components.securitySchemes.session?.description).toMatch(/`Origin`.*403 `csrf_rejected`/)
    // Fields with a closed set of values say which (the listed records are named components).
    type Properties = Record<string, { enum?: string[] }>
    const itemsOf = (path: string) => {
      const { items } = (document.paths[path]?.get?.responses['200'] as unknown as { content: { 'application/json': { schema: { properties: { items: { items: { $ref: string } } } } } } })
        .content['application/json'].schema.properties.items
      return (document.components.schemas[items.$ref.replace('#/components/schemas/', '')] as { properties: Properties }).properties
    }
    expect(itemsOf('/api/v1/sites/{id}/verifications').action?.enum).toEqual(['allow', 'challenge', 'block', 'rejected'])
    expect(itemsOf('/api/v1/sites/{id}/webhook-deliveries').event?.enum).toEqual(['verification.blocked', 'surge.started', 'surge.ended'])
  })

  it('names the records it repeats under components.schemas, and every reference resolves', async () => {
    type Document = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>; components: { schemas: Record<string, { type?: string; properties?: Record<string, unknown> }> } }
    const document = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<Document>()
    const { schemas } = document.components
    const records = ['ApiError', 'Site', 'SiteSettings', 'ListedSite', 'SiteWithSecret', 'Account', 'Member', 'Invitation', 'ApiKey', 'Passkey', 'Verification', 'AccountVerification', 'WebhookDelivery', 'AuditEvent']
    expect(Object.keys(schemas)).toEqual(expect.arrayContaining(records))
    for (const name of Object.keys(schemas)) {
      // OpenAPI 3's component names; no JSON Schema keyword it does not know is left behind.
      expect(name).toMatch(/^[a-zA-Z0-9._-]+$/)
      expect(schemas[name], name).toMatchObject({ type: 'object' })
      expect(JSON.stringify(schemas[name]), name).not.toMatch(/"\$id"|"definitions"|"\$defs"/)
    }
    expect(schemas.Site?.properties?.settings).toEqual({ $ref: '#/components/schemas/SiteSettings' })
    expect(Object.keys(schemas.ApiError?.properties?.error as object)).toContain('properties')

    // Every operation answering a site refers to Site, not to a copy of it.
    const schemaOf = (path: string, method: string, status: string) => document.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.schema
    for (const [path, method, status] of [['/api/v1/sites/{id}', 'get', '200'], ['/api/v1/sites/{id}', 'put', '200'], ['/api/v1/sites/{id}/transfer', 'post', '200'], ['/api/v1/invitations/accept', 'post', '201']]) {
      expect(schemaOf(path!, method!, status!), `${method} ${path}`).toEqual({ $ref: '#/components/schemas/Site' })
    }
    expect(schemaOf('/api/v1/sites', 'post', '201')).toEqual({ $ref: '#/components/schemas/SiteWithSecret' })
    expect(schemaOf('/api/v1/sites/{id}/members/{accountId}', 'put', '200')).toEqual({ $ref: '#/components/schemas/Member' })
    expect(schemaOf('/api/v1/sites/{id}/webhook/test', 'post', '200')).toEqual({ $ref: '#/components/schemas/WebhookDelivery' })
    expect(schemaOf('/api/v1/me', 'get', '200')).toEqual({ $ref: '#/components/schemas/Account' })
    expect(JSON.stringify(schemaOf('/api/v1/sites/{id}', 'get', '404'))).toContain('"$ref":"#/components/schemas/ApiError"')

    // Every reference points at a schema the document holds; no operation repeats the site, its
    // settings or the error envelope inline (Siteverify feedback's errors are a body of their own).
    const references: string[] = []
    const inline: string[] = []
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((each, index) => walk(each, `${at}/${index}`))
      if (typeof node !== 'object' || node === null) return
      const properties = (node as { properties?: object }).properties ?? {}
      const repeated = ('siteKey' in properties && 'settings' in properties) || 'webhookUrlSet' in properties || 'requestId' in properties
      if (repeated && !at.startsWith('/paths/~1api~1v1~1siteverify~1feedback/')) inline.push(at)
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref') references.push(String(value))
        else walk(value, `${at}/${key.replace(/\//g, '~1')}`)
      }
    }
    walk(document.paths, '/paths')
    expect(inline).toEqual([])
    walk(document.components, '/components')
    expect(references.length).toBeGreaterThan(500)
    const unresolved = references.filter((reference) => {
      const match = /^#\/components\/schemas\/([^/]+)$/.exec(reference)
      return match === null || schemas[match[1]!] === undefined
    })
    expect(unresolved).toEqual([])
  })

  it('documents each answer with the media type it is sent as: errors as JSON beside scripts, metrics and pages', async () => {
    type Responses = Record<string, { content?: Record<string, unknown> }>
    const { paths } = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, Record<string, { responses: Responses }>> }>()
    const mediaTypes = (path: string, method: string) =>
      Object.fromEntries(Object.entries(paths[path]?.[method]?.responses ?? {}).map(([status, answer]) => [status, Object.keys(answer.content ?? {})]))
    expect(mediaTypes('/sdk/v1/{file}', 'get')).toEqual({
      200: ['text/javascript', 'application/wasm', 'text/plain', 'application/json'], 304: [], 400: ['application/json'], 404: ['application/json'], 500: ['application/json'], 503: ['application/json'],
    })
    expect(mediaTypes('/metrics', 'get')).toEqual({ 200: ['text/plain'], 401: ['application/json'], 500: ['application/json'], 503: ['application/json'] })
    expect(mediaTypes('/demo', 'get')).toMatchObject({ 200: ['text/html'], 500: ['application/json'] })
    // The logs' exports are files in either format, their refusals JSON.
    for (const path of ['/api/v1/sites/{id}/verifications/export', '/api/v1/audit-log/export']) {
      expect(mediaTypes(path, 'get'), path).toMatchObject({ 200: ['text/csv', 'application/x-ndjson'], 400: ['application/json'], 401: ['application/json'] })
    }
    // What is served matches: the SDK's script, the metrics' text, and a JSON error from the SDK's route.
    const metrics = await service.app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/)
    const missing = await service.app.inject({ method: 'GET', url: '/sdk/v1/nothing-here.js' })
    expect(missing.headers['content-type']).toMatch(/^application\/json/)
  })
})

describe('errors', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp()
  })
  afterAll(() => service.close())

  it('an unknown route answers 404 not_found with a request id', async () => {
    const response = await service.app.inject({ method: 'GET', url: '/no/such/route' })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toEqual({
      error: { code: 'not_found', message: expect.any(String), requestId: response.headers['x-request-id'] },
    })
  })

  it('a route asked with a method it does not take answers 405 method_not_allowed with the methods it takes', async () => {
    for (const [method, url, allow] of [
      ['GET', '/api/v1/challenge', 'POST'],
      ['PUT', '/siteverify', 'POST, GET'],
      ['PATCH', '/api/v1/sites/0b0e6c4e-3f3c-4a7e-9d38-6a3e5d1f8c11', 'GET, HEAD, DELETE, PUT'],
      ['DELETE', '/health', 'GET, HEAD'],
    ] as const) {
      const response = await service.app.inject({ method, url })
      expect(response.statusCode, `${method} ${url}`).toBe(405)
      expect(response.headers.allow, `${method} ${url}`).toBe(allow)
      expect(response.json()).toEqual({
        error: { code: 'method_not_allowed', message: `${url} does not take ${method}; it takes ${allow}.`, requestId: response.headers['x-request-id'] },
      })
    }
    // Another path than the route's (a trailing slash) is not found, whatever the method.
    for (const [method, url] of [['GET', '/health/'], ['POST', '/api/v1/challenge/'], ['DELETE', '/health/']] as const) {
      expect((await service.app.inject({ method, url })).statusCode, `${method} ${url}`).toBe(404)
    }
  })

  it.each([
    ['malformed JSON', '{"broken":', 'The body is not valid JSON.'],
    // Valid JSON, refused by the parser's guard against prototype poisoning: the message says so.
    ['JSON that uses __proto__ as a key', '{"fingerprint":{"__proto__":{"canvas":"x"}}}', 'The body uses __proto__ or constructor.prototype as a key, which is refused.'],
  ])('%s answers 400 validation_error', async (_name, payload, message) => {
    const { siteKey } = await createTestSite(service.app)
    const response = await service.app.inject({
      method: 'POST',
      url: '/api/v1/verify',
      headers: { 'content-type': 'application/json', 'x-site-key': siteKey },
      payload,
    })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toEqual({ error: { code: 'validation_error', message, requestId: response.headers['x-request-id'] } })
  })

  it('a body over 16 KiB answers 413 payload_too_large', async () => {
    const { siteKey } = await createTestSite(service.app)
    const response = await service.app.inject({
      method: 'POST',
      url: '/api/v1/verify',
      headers: { 'content-type': 'application/json', 'x-site-key': siteKey },
      payload: JSON.stringify({ padding: 'x'.repeat(20_000) }),
    })
    expect(response.statusCode).toBe(413)
    expect(response.json()).toEqual({
      error: { code: 'payload_too_large', message: expect.any(String), requestId: response.headers['x-request-id'] },
    })
  })
})

describe('production', () => {
  it('hides /docs and /docs/json', async () => {
    const service = await buildTestApp({ env: { NODE_ENV: 'production' } })
    try {
      expect((await service.app.inject({ method: 'GET', url: '/docs' })).statusCode).toBe(404)
      expect((await service.app.inject({ method: 'GET', url: '/docs/json' })).statusCode).toBe(404)
      expect((await service.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200)
    } finally {
      await service.close()
    }
  })
})
