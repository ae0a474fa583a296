import { STATUS_CODES } from 'node:http'
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

/** Bodies no route accepts as they are: broken, of the wrong shape or type, deep, or of another content type. */
const malformedBodies: { contentType?: string; payload?: string }[] = [
  {},
  { contentType: 'application/json', payload: '{' },
  { contentType: 'application/json', payload: '[]' },
  { contentType: 'application/json', payload: 'null' },
  { contentType: 'application/json', payload: '"text"' },
  { contentType: 'application/json', payload: '1e400' },
  { contentType: 'application/json', payload: '['.repeat(5_000) },
  // Valid, and nested deeper than a recursive walk of it could go.
  { contentType: 'application/json', payload: `${'['.repeat(8_000)}${']'.repeat(8_000)}` },
  // No bytes, whatever the type says: no body.
  { contentType: 'application/json', payload: '' },
  { contentType: 'application/json', payload: '{"__proto__":{"admin":true},"constructor":{"prototype":{}}}' },
  {
    contentType: 'application/json',
    payload: JSON.stringify({
      email: 5, password: [], name: {}, domains: 'x', settings: [], url: 7, secret: null, response: 1,
      challengeId: 'x', nonce: {}, solveTimeMs: 'x', fingerprint: [], behaviorData: 'x',
    }),
  },
  // Text PostgreSQL refuses (a NUL character, half of a surrogate pair) in bodies otherwise valid for some route.
  ...['\\u0000', '\\ud800'].flatMap((character) =>
    [
      `{"email":"a${character}b@example.com","password":"long enough ${character}"}`,
      `{"name":"n${character}"}`,
      `{"domains":["a${character}.example"]}`,
      `{"settings":{"webhookUrl":"https://example.com/${character}"}}`,
    ].map((payload) => ({ contentType: 'application/json', payload })),
  ),
  { contentType: 'application/x-www-form-urlencoded', payload: 'a=%zz&b[]=1&secret=&response=' },
  { contentType: 'multipart/form-data; boundary=x', payload: '--x\r\nContent-Disposition: form-data; name="secret"\r\n\r\nabc\r\n--x' },
  { contentType: 'multipart/form-data', payload: 'no boundary' },
  { contentType: 'text/plain', payload: 'hello' },
  { contentType: 'application/json; charset=latin1', payload: '{}' },
  { contentType: 'application/octet-stream', payload: '\u0000\u0001' },
]

/**
 * Every operation of the OpenAPI document, sent malformed requests with and without credentials:
 * whatever a route makes of them, it is never a 5xx, and a 4xx carries a stable error code (the
 * routes' own tests check which code; this one keeps a new route from forgetting).
 */
describe('malformed requests to every documented route', () => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  beforeAll(async () => {
    service = await buildTestApp({ config: { rateLimitPerMinute: 0 } })
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account)
  })
  afterAll(() => service.close())

  it('get a 4xx with a stable error code (or a 2xx from a route that ignores them), never a 5xx', { timeout: 120_000 }, async () => {
    type ErrorBody = { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } }
    // An error answer is ApiError narrowed to its codes (allOf); Google's error shape is inline.
    type Documented = { content?: { 'application/json'?: { schema?: ErrorBody & { allOf?: [unknown, ErrorBody] } } } }
    const document = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, Documented> }>>
    }>()
    const operations = Object.entries(document.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ path, method: method.toUpperCase() })))
      // Deletions last: a malformed request may still delete (a body is ignored), and the routes after it need the site.
      .sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'))
    expect(operations.length).toBeGreaterThan(20)
    const credentials = [{ ...asScript(account), 'x-site-key': site.siteKey, origin: 'https://shop.example.com' }, {}]
    const answers = new Map<string, string[]>()
    for (const { path, method } of operations) {
      for (const id of [site.id, 'not-a-uuid']) {
        for (const query of ['from=x&to=y&interval=z&limit=-1&cursor=%zz', 'from=0000-01-01T00:00:00Z&to=0000-01-02T00:00:00Z&name=%00&cursor=%00']) {
        const url = `${path.replace(/\{[^}]+\}/g, id)}?${query}`
        for (const { contentType, payload } of malformedBodies) {
          for (const headers of credentials) {
            const response = await service.app.inject({
              method: method as 'POST',
              url,
              headers: { ...headers, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
              payload,
            })
            let code = ''
            if (response.statusCode >= 400) {
              try {
                const { error } = response.json<{ error?: { code?: unknown; status?: unknown } }>()
                // Google's error shape (the createAssessment route): the number is the HTTP status, its stable code is status.
                code = JSON.stringify(typeof error?.code === 'number' && typeof error.status === 'string' ? error.status : error?.code)
              } catch {
                code = `(not JSON: ${response.body.slice(0, 60)})`
              }
            }
            // The status is documented for the route, and so is the code among the status's codes.
            const documented = document.paths[path]?.[method.toLowerCase()]?.responses[String(response.statusCode)]
            const schema = documented?.content?.['application/json']?.schema
            const codes = (schema?.allOf?.[1] ?? schema)?.properties?.error?.properties?.code?.enum
            const isDocumented = documented !== undefined && (codes === undefined || codes.includes(JSON.parse(code || '""') as string))
            const answer = `${response.statusCode} ${code}${isDocumented ? '' : ' (not documented)'}`.trim()
            answers.set(`${method} ${path}`, [...new Set([...(answers.get(`${method} ${path}`) ?? []), answer])])
          }
        }
        }
      }
    }
    const wrong = [...answers].filter(([, seen]) => seen.some((answer) => /^5/.test(answer) || !/^(2\d\d|3\d\d|4\d\d "[A-Za-z_]+")$/.test(answer)))
    expect(wrong).toEqual([])
    // The requests did reach the routes' own checks, not only the authentication in front of them.
    const everything = [...answers.values()].flat()
    expect(everything).toContain('400 "validation_error"')
    expect(everything).toContain('401 "unauthorized"')
  })

  it('answers a path that does not decode, or an id longer than any, in the documented error shape with its request id', async () => {
    const document = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, Record<string, unknown>> }>()
    const withIds = Object.entries(document.paths).filter(([path]) => path.includes('{'))
    expect(withIds.length).toBeGreaterThan(5)
    for (const [path, methods] of withIds) {
      for (const method of Object.keys(methods)) {
        for (const [id, status, code] of [['%E0%A4%A', 400, 'validation_error'], ['x'.repeat(200), 404, 'not_found']] as const) {
          const response = await service.app.inject({ method: method.toUpperCase() as 'GET', url: path.replace(/\{[^}]+\}/g, id), headers: asScript(account) })
          // createAssessment answers in Google's shape, as for any other bad request of it.
          const body = path === '/v1/projects/{project}/assessments'
            ? { error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' } }
            : { error: { code, message: expect.any(String), requestId: response.headers['x-request-id'] } }
          expect({ route: `${method} ${path}`, status: response.statusCode, body: response.json() }).toEqual({
            route: `${method} ${path}`,
            status: path === '/v1/projects/{project}/assessments' ? 400 : status,
            body,
          })
        }
      }
    }
  })

  it('refuses text PostgreSQL cannot store with 400 validation_error naming the field, before anything is stored', async () => {
    const site = await createTestSite(service.app, account)
    const signUp = await service.app.inject({ method: 'POST', url: '/api/v1/accounts', payload: '{"email":"a\\u0000b@example.com","password":"long enough password"}', headers: { 'content-type': 'application/json' } })
    expect(signUp.statusCode).toBe(400)
    expect(signUp.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'email', message: 'must not contain NUL characters or unpaired UTF-16 surrogates' }] })
    const rename = await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: { ...asScript(account), 'content-type': 'application/json' }, payload: '{"name":"half \\ud800 a pair"}' })
    expect(rename.statusCode).toBe(400)
    expect(rename.json().error.details).toEqual([{ field: 'name', message: 'must not contain NUL characters or unpaired UTF-16 surrogates' }])
    const stats = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/stats?from=0000-01-01T00:00:00Z&to=0000-01-02T00:00:00Z`, headers: asScript(account) })
    expect(stats.statusCode).toBe(400)
    expect(stats.json().error.code).toBe('validation_error')
  })
})

describe('requests Node cannot read as HTTP', () => {
  let service: TestApp
  let port = 0
  beforeAll(async () => {
    service = await buildTestApp({ requestTimeoutMs: 1_000 })
    const address = await service.app.listen({ port: 0, host: '127.0.0.1' })
    port = Number(new URL(address).port)
  })
  afterAll(() => service.close())

  /** Writes the raw request and reads the answer until the server closes the connection. */
  function exchange(raw: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write(raw))
      let received = ''
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
      socket.on('close', () => resolve(received))
      socket.on('error', reject)
    })
  }

  it.each([
    ['a Content-Length that is not a number', 'POST /api/v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'validation_error'],
    ['a header name with a space', 'GET /api/v1/me HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n', 400, 'validation_error'],
    ['a URL of 70,000 characters', `GET /api/v1/siteverify?x=${'y'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, 'headers_too_large'],
    // Node answered these two itself, without a body.
    ['an HTTP/1.1 request without Host', 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'validation_error'],
    ['an Expect header other than 100-continue', 'POST /api/v1/siteverify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 200-ok\r\n\r\n{}', 417, 'expectation_failed'],
  ])('answers %s in the documented error shape, with its request id', async (_name, raw, status, code) => {
    const answer = await exchange(raw)
    const [head = '', body = ''] = answer.split('\r\n\r\n')
    expect(head.split('\r\n')[0]).toBe(`HTTP/1.1 ${status} ${STATUS_CODES[status]}`)
    const requestId = /^x-request-id: (.+)$/im.exec(head)?.[1]
    expect(JSON.parse(body)).toEqual({ error: { code, message: expect.any(String), requestId } })
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('serves an HTTP/1.0 request without Host, which that version allows', async () => {
    const answer = await exchange('GET /health HTTP/1.0\r\n\r\n')
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK')
  })

  it('answers 408 request_timeout to a body that arrives too slowly (a byte at a time), and closes the connection', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        socket.write('POST /api/v1/siteverify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{')
      })
      const drip = setInterval(() => socket.writable && socket.write(' '), 200)
      let received = ''
      socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
      socket.on('close', () => {
        clearInterval(drip)
        resolve(received)
      })
      socket.on('error', reject)
    })
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout')
    expect(answer).toContain('"code":"request_timeout"')
  }, 15_000)
})
