import net from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { createKeyRing } from '../src/secret.js'
import { openTestDatabase, openTestKeyValue } from './helpers/storage.js'
import { TEST_SECRET } from './helpers/test-app.js'

interface LogLine {
  level: number
  msg: string
  req?: { url: string }
}

/** The service at LOG_LEVEL=info with its log lines captured, and one route that fails. */
async function startLogging(env: Record<string, string>, lines: LogLine[], level = 'info'): Promise<App> {
  const database = await openTestDatabase('pglite')
  const keyValue = await openTestKeyValue('memory')
  const config = loadConfig({ TOLLGATE_SECRET: TEST_SECRET, LOG_LEVEL: 'info', ...env })
  const app = await buildApp({
    config,
    storage: { database: database.database, keyValue: keyValue.keyValue },
    keyRing: createKeyRing(TEST_SECRET),
    logger: { level, stream: { write: (line: string) => lines.push(JSON.parse(line) as LogLine) } },
  })
  app.get('/fails', async () => {
    throw new Error('a bug')
  })
  app.addHook('onClose', async () => {
    await Promise.all([database.dispose(), keyValue.dispose()])
  })
  await app.ready()
  return app
}

describe('request logging', () => {
  let app: App | undefined
  afterEach(() => app?.close())

  it('writes an incoming and a completed line per request when LOG_REQUESTS is on', async () => {
    const lines: LogLine[] = []
    app = await startLogging({ NODE_ENV: 'development', LOG_REQUESTS: 'true' }, lines)
    await app.inject({ method: 'GET', url: '/health' })
    expect(lines.map((line) => line.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed']))
  })

  it('writes none in production by default, and still logs a failing request', async () => {
    const lines: LogLine[] = []
    app = await startLogging({ NODE_ENV: 'production' }, lines)
    await app.inject({ method: 'GET', url: '/health' })
    expect(lines.filter((line) => /request/.test(line.msg))).toEqual([])

    const failed = await app.inject({ method: 'GET', url: '/fails' })
    expect(failed.statusCode).toBe(500)
    expect(lines).toContainEqual(expect.objectContaining({ level: 50, msg: 'unhandled error' }))
  })

  it('leaves Siteverify\'s query string out of the log, where a reCAPTCHA client may put the secret key', async () => {
    const lines: LogLine[] = []
    app = await startLogging({ NODE_ENV: 'development', LOG_REQUESTS: 'true' }, lines)
    // The vendor path; a percent-escaped form of it that Siteverify still serves; near misses that
    // answer 404; and a secret key sent to any other URL.
    const urls = [
      '/recaptcha/api/siteverify?secret=tgs_do-not-log-me&response=x',
      '/recaptcha/api/site%76erify?secret=tgs_do-not-log-me&response=x',
      '/recaptcha/api/siteverify/?secret=tgs_do-not-log-me',
      '/Siteverify?secret=tgs_do-not-log-me',
      '/api/v1/verify?s%65cret=tgs_do-not-log-me',
      // createAssessment takes the secret key as Google's API key.
      '/v1/projects/p/assessments?key=tgs_do-not-log-me',
      // And a typo of its path (404) still carries the key.
      '/v1/projects/p/assessment?KEY=tgs_do-not-log-me',
    ]
    const service = app
    const answers = await Promise.all(urls.map((url) => service.inject({ method: 'POST', url })))
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 404, 404, 401, 400, 404])
    await app.inject({ method: 'GET', url: '/health?probe=kept' })
    const logged = JSON.stringify(lines)
    expect(logged).not.toContain('tgs_do-not-log-me')
    expect(lines.map((line) => line.req?.url)).toEqual(
      expect.arrayContaining(['/recaptcha/api/siteverify?(query not logged)', '/recaptcha/api/site%76erify?(query not logged)', '/v1/projects/p/assessments?(query not logged)', '/v1/projects/p/assessment?(query not logged)', '/health?probe=kept']),
    )
  })

  it('logs a request Node cannot read without its bytes: no cookie, API key or secret, at any level', async () => {
    const lines: LogLine[] = []
    app = await startLogging({ NODE_ENV: 'production', LOG_REQUESTS: 'true' }, lines, 'trace')
    const address = new URL(await app.listen({ port: 0, host: '127.0.0.1' }))
    const secrets = ['SESSIONCOOKIEVALUE', 'tgak_APIKEYSECRET', 'tgs_SECRETKEYVALUE']
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect({ host: address.hostname, port: Number(address.port) }, () =>
        socket.write(
          `POST /api/v1/siteverify?secret=${secrets[2]} HTTP/1.1\r\nHost: x\r\nCookie: __Host-tollgate_session=${secrets[0]}\r\n` +
            `Authorization: Bearer ${secrets[1]}\r\nContent-Length: abc\r\n\r\n`,
        ),
      )
      socket.on('data', () => {})
      socket.on('close', () => resolve())
      socket.on('error', reject)
    })
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'unreadable request' }))
    const written = JSON.stringify(lines)
    for (const secret of secrets) expect(written).not.toContain(secret)
    // Node's parser errors carry the bytes received as a Buffer (logged as an array of numbers).
    expect(written).not.toContain('rawPacket')
  })
})

describe('a proxy\'s X-Request-Id', () => {
  let app: App | undefined
  afterEach(() => app?.close())

  /** The log lines of one request to /health from `remoteAddress`, and the X-Request-Id answered. */
  async function logOf(env: Record<string, string>, headers: Record<string, string>, remoteAddress = '10.0.0.5') {
    const lines: (LogLine & { reqId?: string; proxyRequestId?: string })[] = []
    app = await startLogging({ NODE_ENV: 'production', TOLLGATE_SECRET: TEST_SECRET, LOG_REQUESTS: 'true', ...env }, lines)
    const response = await app.inject({ method: 'GET', url: '/health', headers, remoteAddress })
    const requestId = String(response.headers['x-request-id'])
    return { requestId, lines: lines.filter((line) => line.reqId === requestId) }
  }

  it('from a trusted proxy, is on the request\'s log lines beside the service\'s own id, which stays the one answered', async () => {
    const { requestId, lines } = await logOf({ TRUST_PROXY: '10.0.0.0/24' }, { 'x-request-id': 'a3f1c2e4b5d60718293a4b5c6d7e8f90' })
    // The service's id: a verification's id and the reference a visitor quotes are never chosen by a header.
    expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(lines.map((line) => [line.msg, line.proxyRequestId])).toEqual([
      ['incoming request', 'a3f1c2e4b5d60718293a4b5c6d7e8f90'],
      ['request completed', 'a3f1c2e4b5d60718293a4b5c6d7e8f90'],
    ])
  })

  it('from a trusted IPv4 proxy that a dual-stack listener sees as ::ffff:10.0.0.5, is on the log lines too', async () => {
    const { lines } = await logOf({ TRUST_PROXY: '10.0.0.5' }, { 'x-request-id': 'nginx-0002' }, '::ffff:10.0.0.5')
    expect(lines.map((line) => line.proxyRequestId)).toEqual(['nginx-0002', 'nginx-0002'])
  })

  it.each([
    ['from a peer TRUST_PROXY does not name', { TRUST_PROXY: '10.0.1.7' }, 'nginx-0001'],
    ['without TRUST_PROXY', {}, 'nginx-0001'],
    ['malformed (a space, a line break)', { TRUST_PROXY: '10.0.0.5' }, 'id with\nline break'],
    ['longer than 128 characters', { TRUST_PROXY: '10.0.0.5' }, 'x'.repeat(129)],
  ])('%s, is left out of the log', async (_case, env, incoming) => {
    const { requestId, lines } = await logOf(env, { 'x-request-id': incoming })
    expect(requestId).not.toBe(incoming)
    expect(lines).toHaveLength(2)
    expect(lines.map((line) => line.proxyRequestId)).toEqual([undefined, undefined])
  })
})
