import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { LogController, type DoneFuncWithErrOrRes, type FastifyReply, type FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'
import { proxyRequestIdReader } from './http/proxy-request-id.js'
import { readUtf8Body } from './http/utf8-body.js'
import { withRequestSerializer } from './log-serializers.js'
import demoSite from './plugins/demo-site.js'
import docs from './plugins/docs.js'
import { addNamedSchemas } from './routes/v1/named-schemas.js'
import authentication from './plugins/authentication.js'
import errorHandler, { answerClientError, answerFrameworkError, answerUnmetExpectation } from './plugins/error-handler.js'
import { ApiError } from './errors.js'
import events from './plugins/events.js'
import logExports from './plugins/log-exports.js'
import metrics from './plugins/metrics.js'
import network from './plugins/network.js'
import openSites from './plugins/open-sites.js'
import sites from './plugins/sites.js'
import storage from './plugins/storage.js'
import siteTraffic from './plugins/site-traffic.js'
import surge from './plugins/surge.js'
import logRetention from './plugins/log-retention.js'
import siteverifyCounts from './plugins/siteverify-counts.js'
import verificationLog from './plugins/verification-log.js'
import webhooks from './plugins/webhooks.js'
import dashboardAssets from './routes/assets/dashboard.js'
import sdkAssets from './routes/assets/sdk.js'
import demoRoutes from './routes/demo/index.js'
import operationsRoutes from './routes/operations/index.js'
import dashboardRoutes from './routes/v1/dashboard.js'
import publicApi from './routes/v1/public-api.js'
import siteverifyFeedbackRoutes from './routes/v1/siteverify/feedback.js'
import siteverifyRoutes from './routes/v1/siteverify/index.js'
import gateRoutes from './routes/gate/index.js'
import type { KeyRing } from './secret.js'
import { createClientTags, type ClientTags } from './domain/challenge/client-tag.js'
import type { Storage } from './storage/ports.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    keyRing: KeyRing
    /** Keyed tags of client addresses and their groups (tagClient under the challenge key), remembered. */
    clientTags: ClientTags
    /**
     * Starts draining (the shutdown's SHUTDOWN_DELAY): /ready answers 503 `draining` and every
     * answer carries `Connection: close`, while requests are served as before; resolves after
     * `delayMs`. app.close() then closes the listener.
     */
    drain(delayMs: number): Promise<void>
    isDraining(): boolean
  }
}

export interface AppOptions {
  config: Config
  storage: Storage
  keyRing: KeyRing
  logger?: FastifyServerOptions['logger']
  /** Test hook: how often counters are flushed to the database. */
  metricsFlushIntervalMs?: number
  /** Test hook: how often surge counts are shared with the other instances (every second by default). */
  surgeFlushIntervalMs?: number
  /** Test hook: the surge meter's counting window (a minute) and how long a surge must be quiet to end (SURGE_QUIET_MS). */
  surgeTiming?: { windowMs: number; quietMs: number }
  /** Test hook: how often Siteverify's counts per site are added to the database (every 5 s by default). */
  siteverifyCountsFlushIntervalMs?: number
  /** Test hook: how often the verification log's retention sweep runs (hourly by default). */
  logRetentionIntervalMs?: number
  /** Test hook: the webhook delivery timeout (10 s by default, as the spec says). */
  webhookTimeoutMs?: number
  /** Test hook: verification log rows kept in memory while the database cannot take them (100,000 by default). */
  verificationLogMaxBufferedRows?: number
  /** Test hook: how long a request may take to arrive, headers and body (REQUEST_TIMEOUT_MS by default). */
  requestTimeoutMs?: number
}

/**
 * How long a request may take to arrive, headers and body: a client that sends its body a byte
 * at a time would hold its connection for ever otherwise (Fastify turns Node's own limit off),
 * and a few hundred such clients would use up the descriptors. Every request here is small.
 */
export const REQUEST_TIMEOUT_MS = 30_000

/** TRUST_PROXY=<n>: trust the nearest n proxies (hop 0 is the socket's peer). */
function trustHops(hops: number) {
  return (_address: string, hop: number) => hop < hops
}

/**
 * Validators: query strings, path parameters and headers arrive as text, so their validators
 * convert ("20" to 20, a single value to a one-element array); a body is validated as sent, so
 * that `"solveTimeMs": null` or `"secret": true` is refused instead of read as 0 or "true".
 */
const ajvOptions = { removeAdditional: false, coerceTypes: 'array', allErrors: false, allowUnionTypes: true } as const
const validatorPool = AjvCompiler()
/** What Fastify hands a validator compiler (its types call it FastifyRouteSchemaDef; ajv-compiler's call it a schema). */
type CompileValidator = (route: { schema: unknown; httpPart?: string }) => unknown
type ServerAjvOptions = { customOptions?: Record<string, unknown> }
function buildValidator(externalSchemas: Record<string, never>, serverOptions: ServerAjvOptions = {}): CompileValidator {
  const pool = validatorPool as unknown as (schemas: Record<string, never>, options: ServerAjvOptions) => CompileValidator
  const textual = pool(externalSchemas, serverOptions)
  const asSent = pool(externalSchemas, { ...serverOptions, customOptions: { ...serverOptions.customOptions, coerceTypes: false } })
  return (route) => (route.httpPart === 'body' ? asSent(route) : refuseInfinity(textual(route) as TextValidator))
}

interface TextValidator {
  (data: unknown): boolean
  errors?: unknown[] | null
}

/**
 * Ajv converts the text `Infinity` (or `1e400`) to a number that passes `integer` and its bounds;
 * a query's `limit=Infinity` reached SQL as such and failed there (500). A converted value that is
 * not finite is refused as the schema's own errors are (400 validation_error, naming the field).
 */
function refuseInfinity(validate: TextValidator): TextValidator {
  const checked: TextValidator = (data) => {
    const valid = validate(data)
    checked.errors = validate.errors
    if (valid !== true || typeof data !== 'object' || data === null) return valid
    const key = Object.keys(data).find((name) => {
      const value = (data as Record<string, unknown>)[name]
      return typeof value === 'number' && !Number.isFinite(value)
    })
    if (key === undefined) return true
    checked.errors = [{ instancePath: `/${key}`, schemaPath: '', keyword: 'type', params: {}, message: 'must be a finite number' }]
    return false
  }
  return checked
}

/** Whether `text` parses as JSON: the default parser's one error covers both malformed JSON and refused keys. */
function isValidJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** Public request bodies are small (DESIGN section 3); nothing in the API needs more. */
export const BODY_LIMIT_BYTES = 16 * 1024

/** While the service closes, how often the keep-alive connections that have fallen idle are ended. */
const CLOSING_IDLE_CHECK_MS = 100

/** An answer whose onSend hook has run, held until the end of the event loop's turn. */
interface HeldAnswer {
  reply: FastifyReply
  done: DoneFuncWithErrOrRes
  payload: unknown
}

/**
 * The whole service as one Fastify instance. The registration order below is the table of
 * contents: infrastructure first (errors, storage, metrics, docs), then the routes.
 */
export type App = Awaited<ReturnType<typeof buildApp>>

export async function buildApp(options: AppOptions) {
  const { config } = options
  // A trusted proxy's X-Request-Id goes on the request's log lines beside the service's own id.
  const proxyRequestIdOf = proxyRequestIdReader(config.trustProxy)
  const childLoggerFactory: FastifyServerOptions['childLoggerFactory'] = proxyRequestIdOf === undefined
    ? undefined
    : (logger, bindings, childOptions, rawRequest) => {
        const proxyRequestId = proxyRequestIdOf(rawRequest)
        return logger.child(proxyRequestId === undefined ? bindings : { ...bindings, proxyRequestId }, childOptions)
      }
  const requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS
  const app = Fastify({
    logger: withRequestSerializer(options.logger ?? { level: config.logLevel }),
    logController: new LogController({ disableRequestLogging: !config.logRequests }),
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: requestTimeoutMs,
    // Node checks the limits every 30 s by default: a late request would get up to twice its time.
    // Node's own answer to an HTTP/1.1 request without Host has no body: the hook below answers it.
    http: { headersTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.min(5_000, requestTimeoutMs / 2), requireHostHeader: false },
    genReqId: () => randomUUID(),
    ...(childLoggerFactory === undefined ? {} : { childLoggerFactory }),
    forceCloseConnections: 'idle',
    ajv: { customOptions: ajvOptions },
    schemaController: { compilersFactory: { buildValidator: buildValidator as unknown as BuildCompilerFromPool } },
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.decorate('config', config)
  app.decorate('keyRing', options.keyRing)
  app.decorate('clientTags', createClientTags(options.keyRing.macKeyFor('challenge')))
  // A body of no bytes is no body, whatever its Content-Type says (clients that send their default
  // one on every request, a DELETE included, or an empty chunked body); anything else is parsed as
  // Fastify's own parser does, refusing __proto__ and constructor.prototype. The bytes must be
  // UTF-8, and a charset other than UTF-8 is refused: Fastify would decode any body as UTF-8,
  // replacing what does not decode (so different invalid passwords would be the same one).
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (body.length === 0) {
      done(null, undefined)
      return
    }
    // parseAs 'buffer': Fastify's type allows either for every parser.
    const bytes = body as Buffer
    const text = readUtf8Body(request.headers['content-type'], bytes)
    if (text instanceof ApiError) {
      done(text, undefined)
      return
    }
    void parseJson(request, text, (error, value) => {
      if (error !== null && isValidJson(text)) done(new ApiError('validation_error', 'The body uses __proto__ or constructor.prototype as a key, which is refused.'), undefined)
      else done(error, value)
    })
  })
  // Hooks on every request take Fastify's callback form: an async hook costs a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id)
    // On every answer (API JSON, errors, /docs, /metrics), not only the pages: a browser that is
    // led to one must take it as the type it says, never sniff it into a script or a page.
    void reply.header('x-content-type-options', 'nosniff')
    // HTTP/1.1 requires Host (RFC 9112, 3.2); HTTP/1.0 clients may leave it out.
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') done(new ApiError('validation_error', 'An HTTP/1.1 request needs a Host header.'))
    else done()
  })
  app.server.on('checkExpectation', answerUnmetExpectation.bind(app))
  // Graceful close. Fastify ends the idle keep-alive connections, but two kinds would hold the
  // shutdown up: a connection whose request is in flight stays open after its answer until
  // keepAliveTimeout (72 s), so answers given while closing carry `Connection: close`; and a
  // connection that has not sent a request yet (browsers open them ahead of need) is not "idle"
  // to Node at all, so those are ended at close, and any accepted while closing at once.
  let closing = false
  // Draining (SHUTDOWN_DELAY, before the close): still serving, but /ready answers 503 so that a
  // load balancer sends new work elsewhere, and every answer carries `Connection: close`, so that
  // no keep-alive connection is left for the close to cut under a request a proxy just sent.
  let draining = false
  app.decorate('isDraining', () => draining)
  app.decorate('drain', async (delayMs: number) => {
    draining = true
    if (delayMs > 0) await sleep(delayMs)
  })
  const withoutRequest = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    if (closing) {
      socket.destroy()
      return
    }
    withoutRequest.add(socket)
    socket.once('close', () => withoutRequest.delete(socket))
  })
  app.server.on('request', (request: IncomingMessage) => withoutRequest.delete(request.socket))
  let endIdle: NodeJS.Timeout | undefined
  app.addHook('preClose', async () => {
    closing = true
    for (const socket of withoutRequest) socket.destroy()
    // An answer whose head left before the close began (a download still going) could not be told
    // `Connection: close`, and Node keeps its connection once it is out, while the close ends only
    // the connections idle as it begins: it would wait for keepAliveTimeout. So the connections
    // that fall idle meanwhile are ended too, checked every CLOSING_IDLE_CHECK_MS until the server
    // has closed (rather than a hook on every answer, which the routes would pay for always).
    endIdle = setInterval(() => app.server.closeIdleConnections(), CLOSING_IDLE_CHECK_MS).unref()
  })
  // onClose hooks run once the server has closed, its last connection ended.
  app.addHook('onClose', async () => clearInterval(endIdle))
  // With the in-process store, answers leave at the end of the event loop's turn, together
  // (setImmediate runs once the turn's I/O callbacks are done), rather than each as soon as it is
  // ready: the requests that arrived together are answered in the same turn, and a client or proxy
  // waiting on several connections is then woken once per turn instead of once per answer. On a
  // 2-core VM this took about 15% off the server's CPU per challenge, verification and Siteverify
  // call. With Redis, answers come with Redis's replies, already together, and holding them
  // measured no better (bench/README.md, "The session of 2026-11-28 (fifteenth)").
  const holdsAnswers = options.storage.keyValue.kind === 'memory'
  let held: HeldAnswer[] = []
  const sendHeld = (): void => {
    const answers = held
    held = []
    // An answer held when the close began leaves after it: it must close its connection too, or
    // the connection, idle once the answer is out, holds the shutdown until keepAliveTimeout.
    const closeConnections = closing || draining
    for (const { reply, done, payload } of answers) {
      if (closeConnections) void reply.header('connection', 'close')
      // What a write throws (a header value Node refuses) fails the request, as it would have
      // had the answer been sent from within the hook.
      try {
        done(null, payload)
      } catch (error) {
        done(error as Error)
      }
    }
  }
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!holdsAnswers) {
      if (closing || draining) void reply.header('connection', 'close')
      done(null, payload)
      return
    }
    if (held.length === 0) setImmediate(sendHeld)
    held.push({ reply, done, payload })
  })

  await app.register(errorHandler)
  await app.register(storage, { storage: options.storage })
  await app.register(metrics, { flushIntervalMs: options.metricsFlushIntervalMs })
  await app.register(events)
  await app.register(sites)
  await app.register(authentication)
  await app.register(webhooks, { timeoutMs: options.webhookTimeoutMs })
  // Downloads of the logs: slots per account, and their streams ended when the app closes.
  await app.register(logExports)
  // The records the routes' schemas reference by name (routes/v1/named-schemas.ts).
  addNamedSchemas(app)
  await app.register(docs, { exposeUi: config.environment !== 'production' })

  await app.register(operationsRoutes)
  await app.register(dashboardAssets, { isProduction: config.environment === 'production' })
  // Public (SDK) routes: challenge, verify, siteverify.
  await app.register(network)
  await app.register(surge, { flushIntervalMs: options.surgeFlushIntervalMs, ...options.surgeTiming })
  await app.register(siteTraffic)
  await app.register(verificationLog, { maxBufferedRows: options.verificationLogMaxBufferedRows })
  await app.register(siteverifyCounts, { flushIntervalMs: options.siteverifyCountsFlushIntervalMs })
  await app.register(logRetention, { intervalMs: options.logRetentionIntervalMs })
  await app.register(demoSite)
  await app.register(openSites)
  await app.register(publicApi)
  await app.register(siteverifyRoutes)
  await app.register(siteverifyFeedbackRoutes)
  // The gate in front of whole sites, for reverse proxies (docs/gate.md).
  await app.register(gateRoutes)
  // Dashboard API routes: accounts, sessions, API keys, sites, webhook deliveries.
  await app.register(dashboardRoutes)
  // Assets: SDK, dashboard, demo.
  await app.register(sdkAssets)
  if (config.environment !== 'production') await app.register(demoRoutes)

  return app
}
