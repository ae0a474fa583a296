import { randomUUID } from 'node:crypto'
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { answerUnroutedAssessment } from '../routes/v1/siteverify/assessments.js'
import { postgresRefusalOf, redisRefusalOf, storeFailureOf } from '../storage/dependency-refusal.js'
import { ApiError, errorBody, errorCatalogue, INVALID_REQUEST_MESSAGE, type ErrorCode, type ErrorDetail } from '../errors.js'

/** Fastify's own client errors, mapped onto the catalogue by status code. */
const codeByStatus: Partial<Record<number, ErrorCode>> = {
  400: 'validation_error',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
}

type ValidationIssue = NonNullable<FastifyError['validation']>[number]

/**
 * A value that matches none of a union's branches is one issue, naming what it may be: Ajv reports
 * each branch's failure and then the union's ("must be equal to constant" four times, then "must
 * match a schema in anyOf"). An enum of constants becomes "must be one of: a, b"; a type or null
 * "must be boolean or null". When a branch got further into the value (an object whose field is
 * wrong, beside "must be null"), that branch's issues are the ones kept.
 */
function mergeAlternatives(issues: ValidationIssue[]): ValidationIssue[] {
  const unions = issues.filter((issue) => issue.keyword === 'anyOf')
  if (unions.length === 0) return issues
  const branchesOf = (union: ValidationIssue) => issues.filter((issue) => issue.schemaPath.startsWith(`${union.schemaPath}/`))
  const merged = new Map<ValidationIssue, ValidationIssue>()
  const absorbed = new Set<ValidationIssue>()
  for (const union of unions) {
    const branches = branchesOf(union)
    const shallow = branches.filter((issue) => issue.instancePath === union.instancePath)
    if (shallow.length < branches.length) {
      for (const issue of [union, ...shallow]) absorbed.add(issue)
      continue
    }
    // Per branch, what it asks for: its constant (a TypeBox literal fails its type and its const
    // for an array value, a repeated query parameter), else its type.
    const asked = new Map<string, { constant?: string; type?: string; other?: true }>()
    for (const issue of branches) {
      const branch = issue.schemaPath.slice(union.schemaPath.length + 1).split('/')[0] ?? ''
      const params = issue.params as { allowedValue?: unknown; type?: unknown }
      const entry = asked.get(branch) ?? {}
      if (issue.keyword === 'const') entry.constant = String(params.allowedValue)
      else if (issue.keyword === 'type' && typeof params.type === 'string') entry.type = params.type
      else entry.other = true
      asked.set(branch, entry)
    }
    const entries = [...asked.values()]
    if (entries.length === 0 || entries.some((entry) => entry.other === true)) continue
    for (const branch of branches) absorbed.add(branch)
    const onlyConstants = entries.every((entry) => entry.constant !== undefined)
    const choices = [...new Set(entries.map((entry) => entry.constant ?? entry.type))]
    merged.set(union, { ...union, message: onlyConstants ? `must be one of: ${choices.join(', ')}` : `must be ${choices.join(' or ')}` })
  }
  return issues.filter((issue) => !absorbed.has(issue)).map((issue) => merged.get(issue) ?? issue)
}

/** How much of the name of a field the schema does not have is echoed: the client chose it, at any length. */
const MAX_ECHOED_NAME = 64

function shortened(name: string): string {
  return name.length > MAX_ECHOED_NAME ? `${name.slice(0, MAX_ECHOED_NAME)}…` : name
}

function detailsOf(error: FastifyError): ErrorDetail[] | undefined {
  if (error.validation === undefined) return undefined
  return mergeAlternatives(error.validation).map((issue) => {
    const { missingProperty: missing, additionalProperty: unexpected } = issue.params as { missingProperty?: unknown; additionalProperty?: unknown }
    // A field that is missing, or one that is not the schema's, is named itself rather than its object.
    const named = typeof missing === 'string' ? missing : typeof unexpected === 'string' ? shortened(unexpected) : ''
    const path = [issue.instancePath.replace(/^\//, '').replaceAll('/', '.'), named]
      .filter((part) => part !== '')
      .join('.')
    const field = error.validationContext === undefined || error.validationContext === 'body'
      ? path
      : [error.validationContext, path].filter((part) => part !== '').join('.')
    return { ...(field === '' ? {} : { field }), message: typeof unexpected === 'string' ? unknownFieldMessage(error.validationContext) : (issue.message ?? 'is not valid') }
  })
}

/** What a field the schema does not have is told: a query's is a parameter (a filter misspelt must not be ignored). */
function unknownFieldMessage(context: string | undefined): string {
  return context === 'querystring' ? 'is not a parameter of this route' : 'is not a field of this request'
}

/** The catalogue code an error is answered with: for metrics and logs that must say what the client was told. */
export function errorCodeOf(error: FastifyError | Error): ErrorCode {
  if (error instanceof ApiError) return error.code
  const status = (error as FastifyError).statusCode ?? 500
  if (status < 500) return codeByStatus[status] ?? 'validation_error'
  return isOutage(error) || isTransactionConflict(error) ? 'service_unavailable' : 'internal_error'
}

/**
 * PostgreSQL ended the request's transaction for a conflict with another one: a deadlock (40P01)
 * or a serialization failure (40001). The request did nothing and the same request again may
 * well pass, which 503 tells a client and 500 does not. Such a failure is still logged in full,
 * as a bug: the service takes its locks in one order so that deadlocks do not happen.
 */
function isTransactionConflict(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === '40P01' || code === '40001'
}

const TRANSACTION_CONFLICT_MESSAGE = 'The database ended this request in a conflict with another one at the same moment; nothing was changed. Retry it.'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Logs a failure of ours (a bug: every one, in full) or of a dependency (an outage: one line
     * per dependency every OUTAGE_LOG_INTERVAL_MS, naming it and counting the failures in between,
     * so that an outage does not write a stack per request).
     */
    logFailure(request: FastifyRequest, error: Error, what: string): void
  }
}

const OUTAGE_LOG_INTERVAL_MS = 10_000

/**
 * One handler for every error, so every failure has the body shape of DESIGN section 3. Expected
 * failures carry their code; Fastify's client errors are mapped by status; anything else is a
 * bug or an outage: logged (app.logFailure), answered 500 (or 503) without a word of its internals.
 */
async function errorHandlerPlugin(app: FastifyInstance): Promise<void> {
  const outages = new Map<string, { loggedAt: number; since: number }>()
  app.decorate('logFailure', (request: FastifyRequest, error: Error, what: string) => {
    const dependency = dependencyOf(error)
    if (dependency === undefined) {
      request.log.error({ err: error }, what)
      return
    }
    const now = Date.now()
    const outage = outages.get(dependency)
    if (outage !== undefined && now - outage.loggedAt < OUTAGE_LOG_INTERVAL_MS) {
      outage.since += 1
      return
    }
    outages.set(dependency, { loggedAt: now, since: 0 })
    request.log.error(
      { err: error, dependency, reason: reasonOf(error, dependency), failedSinceLastLine: outage?.since ?? 0 },
      `${what}: ${dependency} unavailable (logged once per ${OUTAGE_LOG_INTERVAL_MS / 1000} s while it lasts)`,
    )
  })

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      if (error.headers !== undefined) void reply.headers(error.headers)
      return reply.code(error.statusCode).send(errorBody(error.code, request.id, error.message, error.details))
    }
    const code = errorCodeOf(error)
    if ((error.statusCode ?? 500) < 500) {
      const details = detailsOf(error)
      const message = details !== undefined ? INVALID_REQUEST_MESSAGE : clientMessage(error, code)
      return reply.code(errorCatalogue[code].status).send(errorBody(code, request.id, message, details))
    }
    const isConflict = isTransactionConflict(error)
    app.logFailure(request, error, isConflict ? 'transaction conflict' : code === 'service_unavailable' ? 'request failed' : 'unhandled error')
    return reply.code(errorCatalogue[code].status).send(errorBody(code, request.id, isConflict ? TRANSACTION_CONFLICT_MESSAGE : undefined))
  })

  // The routes' paths as patterns, by method: a path that exists with other methods answers 405
  // with the methods it takes (Allow), as HTTP has it, rather than 404.
  const routes: { pattern: RegExp; method: string }[] = []
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return
    const pattern = new RegExp(`^${route.url.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}$`)
    for (const method of [route.method].flat()) if (method !== 'OPTIONS') routes.push({ pattern, method })
  })

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? ''
    const allowed = [...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))]
    // A path the router did not take with a method its route does take is no such path (a
    // parameter it refused): 404, or a client following Allow would send it again for ever.
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send(errorBody('method_not_allowed', request.id, `${path} does not take ${request.method}; it takes ${allowed.join(', ')}.`))
    }
    return reply.code(404).send(errorBody('not_found', request.id, `No route for ${request.method} ${path}.`))
  })
}

/**
 * Fastify's router refuses some URLs before any route or hook runs (Fastify's frameworkErrors):
 * a path that does not decode (400 validation_error), and a path parameter longer than any id
 * (404 not_found: no such thing exists). They get the body of every other error and the request id;
 * on createAssessment's path, Google's 400 INVALID_ARGUMENT, the body its clients read.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  void reply.header('x-request-id', request.id)
  if ((error.code === 'FST_ERR_MAX_PARAM_LENGTH' || error.code === 'FST_ERR_BAD_URL') && answerUnroutedAssessment(request, reply)) return
  const code: ErrorCode = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'not_found' : error.code === 'FST_ERR_BAD_URL' ? 'validation_error' : 'internal_error'
  const message = code === 'validation_error' ? 'The URL is not valid: a percent-encoded sequence does not decode.' : undefined
  if (code === 'internal_error') request.log.error({ err: error }, 'router error')
  void reply.code(errorCatalogue[code].status).send(errorBody(code, request.id, message))
}

/**
 * Requests Node cannot read as HTTP (a malformed header, a Content-Length that is not a number,
 * a request line and headers over 16 KiB, a request that did not arrive in time) never reach
 * Fastify's routes or hooks: answered here, at the socket, in the documented error shape with a
 * request id of their own (Fastify's default wrote a body of its own shape). Siteverify's
 * always-200 cannot apply: which route was meant is not known.
 */
export function answerClientError(this: { log: FastifyBaseLogger }, error: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const code: ErrorCode =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : error.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : 'validation_error'
  const message = code === 'validation_error' ? 'The request is not valid HTTP.' : undefined
  const requestId = randomUUID()
  // Not the error itself: its rawPacket holds the bytes received, cookies, API keys and secrets included.
  this.log.debug({ code: error.code, requestId }, 'unreadable request')
  if (socket.writable) {
    const body = JSON.stringify(errorBody(code, requestId, message))
    const status = errorCatalogue[code].status
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

/**
 * A request whose Expect header is not `100-continue` (Node's 'checkExpectation'): 417 in the
 * documented error shape, where Node's own answer had no body at all.
 */
export function answerUnmetExpectation(this: { log: FastifyBaseLogger }, _request: IncomingMessage, response: ServerResponse): void {
  const requestId = randomUUID()
  this.log.debug({ requestId }, 'unmet Expect header')
  const body = JSON.stringify(errorBody('expectation_failed', requestId))
  response.shouldKeepAlive = false
  response
    .writeHead(errorCatalogue.expectation_failed.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': requestId,
    })
    .end(body)
}

/** Messages of Fastify's content errors are safe and useful; others get the catalogue's sentence. */
function clientMessage(error: FastifyError, code: ErrorCode): string {
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) return 'The body is not valid JSON.'
  return errorCatalogue[code].message
}

/** Connection failures to PostgreSQL or Redis, timed-out statements, and stores that refuse for now: a 503 tells clients to retry, a 500 would not. */
export function isOutage(error: Error): boolean {
  return dependencyOf(error) !== undefined
}

/** Which dependency an error says is away, or undefined when it is not an outage. */
function dependencyOf(error: Error): 'Redis' | 'PostgreSQL' | 'PostgreSQL or Redis' | undefined {
  const code = (error as NodeJS.ErrnoException).code
  if (
    // PostgreSQL canceled a statement that ran past the statement timeout (57014); it lacks a
    // resource (53: a full disk, memory, connections) or its files failed it (58: I/O); it ended
    // the connection or refuses new ones for now: a shutdown, a restart, a failover,
    // pg_terminate_backend (57P01-57P05), and the connection exceptions (class 08).
    (typeof code === 'string' && /^(57014|5[38][0-9A-Z]{3}|57P0[1-5]|08[0-9A-Z]{3})$/.test(code)) ||
    // It answers but refuses: read-only (a standby, a demoted primary), or a password changed.
    postgresRefusalOf(error) !== undefined ||
    // The PostgreSQL client gave up on a connection that went silent (its query_timeout), or a
    // statement came after its transaction's connection was lost.
    /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable/i.test(error.message)
  ) {
    return 'PostgreSQL'
  }
  if (
    // ioredis: the connection dropped with the command in flight (maxRetriesPerRequest), it is not
    // connected now, or a command got no answer (its commandTimeout).
    error.name === 'MaxRetriesPerRequestError' ||
    /Stream isn't writeable|Connection is closed|Command timed out/i.test(error.message) ||
    // It answers but refuses: full under noeviction, a replica after a failover, loading its data.
    redisRefusalOf(error) !== undefined
  ) {
    return 'Redis'
  }
  // A lost connection's errno is the same from either store: the client that threw it tells which.
  if (isNetworkFailure(error)) return storeFailureOf(error) ?? 'PostgreSQL or Redis'
  return undefined
}

/**
 * The outage in plain words, beside the client's own error (ioredis's "Stream isn't writeable and
 * enableOfflineQueue options is false" means Redis is not connected): the store's refusal when it
 * refuses, else that it is not reachable or did not answer in time.
 */
function reasonOf(error: Error, dependency: string): string {
  const refusal = redisRefusalOf(error) ?? postgresRefusalOf(error)
  if (refusal !== undefined) return `${dependency} ${refusal.message}`
  const code = (error as NodeJS.ErrnoException).code
  if (code === '57014' || /timed out|timeout/i.test(error.message)) return `${dependency} did not answer in time`
  if (typeof code === 'string' && /^5[38]/.test(code)) return `${dependency} is short of a resource or failed to read or write its files`
  return `${dependency} not reachable`
}

/**
 * The errnos of a connection that could not be made or was lost (refused, reset, timed out, no
 * route, a name that does not resolve now, a closed pipe): the network between the service and a
 * store, whatever the way it failed, not a bug of ours.
 */
const NETWORK_ERRNOS = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'ENOTCONN',
  'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENETRESET', 'EADDRNOTAVAIL',
  'ENOTFOUND', 'EAI_AGAIN',
])

/**
 * An error of the network, or a connect that found no socket: ENOENT from connect() is a Unix
 * socket path whose file is gone (PostgreSQL or Redis stopped, or not started yet); from anywhere
 * else (a file the code reads) it is no outage.
 */
function isNetworkFailure(error: Error): boolean {
  const { code, syscall } = error as NodeJS.ErrnoException
  if (code === undefined) return false
  return NETWORK_ERRNOS.has(code) || (code === 'ENOENT' && syscall === 'connect')
}

export default fp(errorHandlerPlugin, { name: 'error-handler' })
