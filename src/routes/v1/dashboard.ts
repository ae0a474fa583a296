import compress from '@fastify/compress'
import cookie from '@fastify/cookie'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import accountsRoutes from './accounts/index.js'
import apiKeysRoutes from './api-keys/index.js'
import auditLogRoutes from './audit-log/index.js'
import invitationsRoutes from './invitations/index.js'
import meRoutes from './me/index.js'
import sessionsRoutes from './sessions/index.js'
import sitesRoutes from './sites/index.js'
import { findUnstorableText } from '../../domain/storable-text.js'
import { findMalformedQueryEscape } from '../../http/form-fields.js'
import { ApiError, invalidRequest } from '../../errors.js'
import { closedQueryOf } from './dashboard-schemas.js'
import { transportSecurity } from '../assets/dashboard.js'
import webhookRoutes from './webhooks/index.js'

/** The smallest answer of the dashboard API sent compressed, to a client that accepts br or gzip. */
export const COMPRESSION_THRESHOLD_BYTES = 8_192

/** How much of a query parameter's name an error echoes: the client chose it, at any length. */
const MAX_ECHOED_NAME = 64

/** The WWW-Authenticate header of every 401 of the dashboard API. */
export const DASHBOARD_CHALLENGE = 'Bearer realm="tollgate"'

/**
 * The dashboard API of DESIGN section 3, mounted under /api/v1 (needs the authentication plugin).
 * Session cookies are parsed in this scope only: the SDK's routes and Siteverify, which carry
 * none that matter, skip the cookie plugin's two hooks on every request.
 */
const dashboardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(cookie)
  // Large JSON answers go compressed (br or gzip) to a client that asks for it: a list of a
  // thousand sites is 663 kB (739 kB with include=summary), and the dashboard reads it on every
  // visit. Registered in this scope, it hooks only the routes below: challenge, verify and
  // Siteverify, which the benchmarks hold to their budgets, run no hook of it. Below
  // COMPRESSION_THRESHOLD_BYTES an answer goes as it is (a site's record, an error): the bytes
  // saved would not pay for the CPU. JSON only: the log's streamed exports (CSV, NDJSON) go as
  // they are (docs/deploying.md: a reverse proxy may compress them). Request bodies are not
  // decompressed: the API reads plain JSON, within its body limit.
  await app.register(compress, { threshold: COMPRESSION_THRESHOLD_BYTES, customTypes: /^application\/json(;|$)/, encodings: ['br', 'gzip'], globalDecompression: false })
  // An unknown query parameter is a 400 on every route of this API, not one ignored (closedQuery).
  app.addHook('onRoute', (route) => {
    if (route.schema !== undefined) route.schema = { ...route.schema, querystring: closedQueryOf(route.schema.querystring) }
  })
  // This API reads JSON only. Fastify would read text/plain as a string, so the commonest slip of
  // a script (fetch with a JSON.stringify body and no Content-Type sends text/plain) got "must be
  // object"; it and every other type now get a 415 that says what to send. No bytes is no body.
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => {
    if (body.length === 0) done(null, undefined)
    else done(new ApiError('unsupported_media_type', 'The body must be JSON, sent with Content-Type: application/json.'))
  })
  // Answers of this API hold account data and, once, secrets: no cache keeps them. In production,
  // browsers are told to keep to https (transportSecurity).
  const headers = { 'cache-control': 'no-store', ...(app.config.environment === 'production' ? transportSecurity : {}) }
  app.addHook('onSend', (_request, reply, payload, done) => {
    void reply.headers(headers)
    // A 401 names the scheme that would be accepted (RFC 9110 section 11.6.1): an API key as a bearer token.
    if (reply.statusCode === 401) void reply.header('www-authenticate', DASHBOARD_CHALLENGE)
    done(null, payload)
  })
  // A query's %-escapes must stand for UTF-8, as a form's must (form-fields.ts): Fastify's parser
  // keeps `%C3%28` and `%FF` as written, so a search for them matched the literal text, and `%FF`
  // and `%25FF` were one value. A 400 naming the parameter, on every route of this API.
  app.addHook('preValidation', async (request) => {
    const start = request.url.indexOf('?')
    if (start === -1) return
    const name = findMalformedQueryEscape(request.url.slice(start + 1))
    if (name === undefined) return
    const message = 'has a %-escape that does not decode to UTF-8'
    throw invalidRequest([{ field: name === '' ? 'querystring' : `querystring.${name.slice(0, MAX_ECHOED_NAME)}`, message }])
  })
  // What these routes are sent ends up in PostgreSQL (or is compared with what is there), which
  // refuses some strings outright: they are a 400 naming the field, not a failed query's 500.
  app.addHook('preValidation', async (request) => {
    const field =
      findUnstorableText(request.params, 'params') ?? findUnstorableText(request.query, 'querystring') ?? findUnstorableText(request.body, '')
    if (field !== undefined) {
      const message = 'must not contain NUL characters or unpaired UTF-16 surrogates'
      throw invalidRequest([field === '' ? { message } : { field, message }])
    }
  })
  await app.register(accountsRoutes, { prefix: '/api/v1' })
  await app.register(sessionsRoutes, { prefix: '/api/v1' })
  await app.register(meRoutes, { prefix: '/api/v1' })
  await app.register(apiKeysRoutes, { prefix: '/api/v1' })
  await app.register(sitesRoutes, { prefix: '/api/v1' })
  await app.register(webhookRoutes, { prefix: '/api/v1' })
  await app.register(invitationsRoutes, { prefix: '/api/v1' })
  await app.register(auditLogRoutes, { prefix: '/api/v1' })
}

export default dashboardRoutes
