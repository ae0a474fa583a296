import cookie from '@fastify/cookie'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { tagClient } from '../../domain/challenge/client-tag.js'
import { CLEARANCE_COOKIE, isClearedBy, issueClearance, type ClearanceHolder } from '../../domain/gate/clearance.js'
import { addressGroupOf } from '../../domain/history/client-keys.js'
import { consumeRateLimit } from '../../domain/rate-limit.js'
import type { Site } from '../../domain/sites/site.js'
import { testSiteFor } from '../../domain/sites/test-site-keys.js'
import { CLOCK_SKEW_MARGIN_MS, redemptionKey } from '../../domain/siteverify/redeem-token.js'
import { MAX_TOKEN_LENGTH, readToken } from '../../domain/token/token.js'
import { ApiError, errorBody } from '../../errors.js'
import { PublicErrorResponse } from '../v1/public-schemas.js'
import { GATE_PAGE_POLICY, renderGatePage } from './gate-page.js'

/** Where the protected host forwards to Tollgate, unless the proxy says otherwise. */
export const DEFAULT_GATE_PREFIX = '/.tollgate'

const SITE_KEY_HEADER = 'x-tollgate-site-key'
const PREFIX_HEADER = 'x-tollgate-prefix'
const MAX_SITE_KEY_LENGTH = 128
/** A path of one to eight segments of URL-safe characters (none only dots), without a trailing slash. */
const prefixPattern = /^(?:\/(?!\.*(?:\/|$))[A-Za-z0-9._~-]+){1,8}$/

const CheckQuery = Type.Object({
  // Traefik's and Caddy's check addresses carry it; a visitor's query string never reaches them.
  sitekey: Type.Optional(Type.String({ maxLength: MAX_SITE_KEY_LENGTH, description: 'The site key; or the X-Tollgate-Site-Key header' })),
})

const ClearanceBody = Type.Object({
  siteKey: Type.String({ minLength: 1, maxLength: MAX_SITE_KEY_LENGTH }),
  token: Type.String({ minLength: 1, maxLength: MAX_TOKEN_LENGTH, description: 'A token of the SDK, from the page of this host' }),
})

function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/** Whether the caller reads HTML (a browser's navigation) rather than JSON (an API client, fetch). */
function wantsPage(request: FastifyRequest): boolean {
  return /\btext\/html\b/.test(request.headers.accept ?? '')
}

/**
 * The gate in front of whole sites (docs/gate.md): a reverse proxy asks /gate/v1/check about
 * every request of the protected host (nginx auth_request, Caddy forward_auth, Traefik
 * ForwardAuth) and lets it through on 2xx. A visitor without a valid clearance cookie gets the
 * gate's page instead (403), which checks the browser with the SDK, trades the token for the
 * cookie at /gate/v1/clearance (through the same host, under the prefix the proxy forwards to
 * Tollgate) and loads the address again.
 */
const gateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(cookie)
  const gateKey = app.keyRing.macKeyFor('gate')
  const challengeKey = app.keyRing.macKeyFor('challenge')
  const lifetimeMs = app.config.gateClearanceSeconds * 1000

  /** The site of a public key; a key the cache does not know costs a database query, rate limited per client. */
  async function siteOf(request: FastifyRequest, siteKey: string | undefined): Promise<Site> {
    if (siteKey === undefined || siteKey === '' || siteKey.length > MAX_SITE_KEY_LENGTH) {
      throw new ApiError('invalid_site_key', 'The gate needs the site key: the sitekey query parameter or the X-Tollgate-Site-Key header.')
    }
    let site = testSiteFor(siteKey) ?? app.siteCache.peekBySiteKey(siteKey)
    if (site === undefined) {
      if (app.config.rateLimitPerMinute > 0) {
        const verdict = await consumeRateLimit(app.keyValue, `site-lookup:${tagClient(challengeKey, addressGroupOf(request.ip))}`, {
          limit: app.config.rateLimitPerMinute,
          windowMs: 60_000,
        })
        if (!verdict.isAllowed) throw new ApiError('rate_limited', undefined, undefined, { 'retry-after': String(verdict.retryAfterSeconds) })
      }
      site = (await app.siteCache.findBySiteKey(siteKey)) ?? null
    }
    if (site === null) throw new ApiError('invalid_site_key', 'The gate\'s site key names no site.')
    return site
  }

  function holderOf(request: FastifyRequest, site: Site): ClearanceHolder {
    return { siteId: site.id, userAgent: request.headers['user-agent'] ?? '', addressGroup: addressGroupOf(request.ip) }
  }

  /** The gate's page, or for a caller that does not read HTML the error it stands for. */
  function answerUncleared(request: FastifyRequest, reply: FastifyReply, site: Site, prefix: string) {
    void reply.code(403).header('cache-control', 'no-store')
    if (!wantsPage(request)) return reply.send(errorBody('clearance_required', request.id))
    return reply
      .headers({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': GATE_PAGE_POLICY, 'x-content-type-options': 'nosniff' })
      .send(renderGatePage({ siteKey: site.siteKey, prefix }))
  }

  await app.register(async (scope) => {
    const check = scope.withTypeProvider<TypeBoxTypeProvider>()
    // The proxy asks with the visitor's method, whatever it is, and a body it may not have
    // dropped: the body is never read.
    check.removeAllContentTypeParsers()
    check.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))
    check.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url: '/gate/v1/check',
      schema: {
        tags: ['gate'],
        summary: 'Whether a visitor of a protected host may pass',
        description:
          'For a reverse proxy (nginx auth_request, Caddy forward_auth, Traefik ForwardAuth) asking about each request of the protected host, with its Cookie, User-Agent and X-Forwarded-For. 204 with a valid clearance cookie; otherwise 403, with the gate\'s page for a browser (Accept: text/html) or clearance_required.',
        querystring: CheckQuery,
        errorCodes: ['invalid_site_key', 'clearance_required', 'rate_limited'],
        response: { 204: Type.Null(), 400: PublicErrorResponse, 401: PublicErrorResponse, 403: PublicErrorResponse, 429: PublicErrorResponse },
      },
      handler: async (request, reply) => {
        // Only from the proxy's configuration, never the query string a visitor's request may
        // pass on: the page loads its script from there.
        const prefix = firstOf(request.headers[PREFIX_HEADER]) ?? DEFAULT_GATE_PREFIX
        if (!prefixPattern.test(prefix)) {
          throw new ApiError('validation_error', `The gate's prefix must be a path such as ${DEFAULT_GATE_PREFIX} (no trailing slash).`)
        }
        const site = await siteOf(request, firstOf(request.headers[SITE_KEY_HEADER]) ?? request.query.sitekey)
        const clearance = request.cookies[CLEARANCE_COOKIE]
        if (clearance !== undefined && isClearedBy(gateKey, clearance, holderOf(request, site), Date.now())) {
          app.counters.increment('gateChecks', { result: 'cleared' })
          return reply.code(204).header('cache-control', 'no-store').send(null)
        }
        app.counters.increment('gateChecks', { result: 'refused' })
        return answerUncleared(request, reply, site, prefix)
      },
    })
  })

  app.post('/gate/v1/clearance', {
    schema: {
      tags: ['gate'],
      summary: "Trade a token for the gate's clearance cookie",
      description:
        "Called by the gate's page, through the protected host: redeems a token of that host's page (once; Siteverify refuses it afterwards) and sets the tollgate_clearance cookie for that host. 403 token_invalid for a token that is forged, changed, another site's or another host's, or not an allow; 409 token_spent when it expired or was used.",
      body: ClearanceBody,
      errorCodes: ['invalid_site_key', 'token_invalid', 'token_spent', 'rate_limited'],
      response: { 204: Type.Null(), 400: PublicErrorResponse, 401: PublicErrorResponse, 403: PublicErrorResponse, 409: PublicErrorResponse, 429: PublicErrorResponse },
    },
    errorHandler: (error) => {
      const { code, validation } = error as { code?: unknown; validation?: unknown }
      const result = validation === undefined ? code : 'validation_error'
      app.counters.increment('gateClearances', { result: typeof result === 'string' && result in refusals ? result : 'other' })
      throw error
    },
  }, async (request, reply) => {
    const site = await siteOf(request, request.body.siteKey)
    // The page's own origin, as the browser sent it: the cookie is for that host, and the token
    // must have been issued to a page of it.
    const origin = originOf(request.headers.origin)
    if (origin === undefined) throw new ApiError('token_invalid', 'The clearance is asked for from the gate\'s page, whose request carries an Origin.')
    const now = Date.now()
    const reading = readToken(app.keyRing.macKeyFor('token'), request.body.token, now)
    if (reading.outcome === 'invalid') throw new ApiError('token_invalid')
    const { claims } = reading
    if (claims.siteId !== site.id) throw new ApiError('token_invalid', "The token is another site's.")
    if (claims.hostname !== origin.hostname) throw new ApiError('token_invalid', `The token was issued to a page of ${claims.hostname ?? 'no host'}, not of ${origin.hostname}.`)
    if (claims.action !== 'allow') throw new ApiError('token_invalid', 'The token does not allow its visitor in.')
    if (reading.outcome === 'expired' || claims.issuedAt < app.keyValue.remembersSince()) throw new ApiError('token_spent')
    // The same single-use marker as Siteverify's, so that a token spent here is spent there too.
    const isFirst = await app.keyValue.setIfAbsent(redemptionKey(claims.challengeId), 'gate', reading.expiresAt - now + CLOCK_SKEW_MARGIN_MS)
    if (!isFirst) throw new ApiError('token_spent')
    const expiresAt = now + lifetimeMs
    void reply.setCookie(CLEARANCE_COOKIE, issueClearance(gateKey, holderOf(request, site), expiresAt), {
      path: '/',
      maxAge: app.config.gateClearanceSeconds,
      httpOnly: true,
      sameSite: 'lax',
      secure: origin.protocol === 'https:',
    })
    app.counters.increment('gateClearances', { result: 'issued' })
    return reply.code(204).header('cache-control', 'no-store').send(null)
  })
}

/** The codes a clearance is refused with, by which it is counted. */
const refusals = { token_invalid: true, token_spent: true, invalid_site_key: true, validation_error: true, rate_limited: true }

function originOf(header: string | undefined): URL | undefined {
  if (header === undefined) return undefined
  try {
    const url = new URL(header)
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : undefined
  } catch {
    return undefined
  }
}

export default gateRoutes
