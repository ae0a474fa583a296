import cookie from '@fastify/cookie'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type, type Static } from 'typebox'
import { CLEARANCE_COOKIE, clearancesIn, issueClearance, readClearance, renewalOf, type ClearanceHolder, type ClearanceTerms } from '../../domain/gate/clearance.js'
import { addressGroupOf } from '../../domain/history/client-keys.js'
import { readRequestOrigin } from '../../domain/public-access/request-origin.js'
import { consumeRateLimit } from '../../domain/rate-limit.js'
import { isAddressAllowed } from '../../domain/sites/allowed-addresses.js'
import { hasBlocklist, isBlocklisted } from '../../domain/sites/blocklist.js'
import type { Site } from '../../domain/sites/site.js'
import { SITE_KEY_PATTERN } from '../../domain/sites/site-keys.js'
import { testSiteFor } from '../../domain/sites/test-site-keys.js'
import { isPastLifetime, markerTimeToLiveMs, mayHaveForgottenRedemption, redemptionKey } from '../../domain/siteverify/redeem-token.js'
import { addressClaimOf, matchesAddressClaim, refusesAddress } from '../../domain/token/address-binding.js'
import { MAX_TOKEN_LENGTH, readToken } from '../../domain/token/token.js'
import { ApiError, errorBody } from '../../errors.js'
import { PublicErrorResponse } from '../v1/public-schemas.js'
import { GATE_PAGE_POLICY, renderGatePage } from './gate-page.js'
import { gateStringsIn, negotiateLanguage } from './gate-strings.js'

/** Where the protected host forwards to Tollgate, unless the proxy says otherwise. */
export const DEFAULT_GATE_PREFIX = '/.tollgate'

const MAX_SITE_KEY_LENGTH = 128
const UNKNOWN_SITE_KEY = "The gate's site key names no site."
/** A path of one to eight segments of URL-safe characters (none only dots), without a trailing slash. */
const prefixPattern = /^(?:\/(?!\.*(?:\/|$))[A-Za-z0-9._~-]+){1,8}$/

/*
 * The site key and the prefix come from the query string of the address the proxy's
 * configuration gives for the check (nginx's proxy_pass, Caddy's forward_auth uri, Traefik's
 * forwardAuth address), never from headers: Caddy and Traefik pass every header of the visitor's
 * request on to the check, so a header would let a visitor name a site of their own (with an
 * easy challenge, or an allowlist of their addresses) in front of someone else's. A visitor's
 * query string never reaches the check in the documented configurations; where a proxy appends
 * it anyway, a second sitekey or prefix makes the value a list, refused with 400.
 */
const CheckQuery = Type.Object({
  sitekey: Type.String({ minLength: 1, maxLength: MAX_SITE_KEY_LENGTH, description: "The site key, from the proxy's configuration (letters, digits, - and _; any other names no site: 401 invalid_site_key)" }),
  prefix: Type.Optional(
    Type.String({
      pattern: prefixPattern.source,
      description: `Where the protected host forwards the gate's paths to Tollgate, without a trailing slash (default ${DEFAULT_GATE_PREFIX})`,
    }),
  ),
})

type CheckQueryFields = Static<typeof CheckQuery>

const ClearanceBody = Type.Object({
  siteKey: Type.String({ minLength: 1, maxLength: MAX_SITE_KEY_LENGTH, description: 'The site key (letters, digits, - and _; any other names no site: 401 invalid_site_key)' }),
  token: Type.String({ minLength: 1, maxLength: MAX_TOKEN_LENGTH, description: 'A token of the SDK, from the page of this host' }),
})

function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/** Whether the caller reads HTML (a browser's navigation) rather than JSON (an API client, fetch). */
function wantsPage(request: FastifyRequest): boolean {
  return /\btext\/html\b/.test(request.headers.accept ?? '')
}

/** The codes a check or a clearance is refused with, by which it is counted; anything else is other. */
const countedCodes = new Set(['token_invalid', 'token_spent', 'invalid_site_key', 'validation_error', 'rate_limited'])

/** The label of a refusal for the gate's counters. */
function resultOf(error: unknown): string {
  const { code, validation } = error as { code?: unknown; validation?: unknown }
  const result = validation === undefined ? code : 'validation_error'
  return typeof result === 'string' && countedCodes.has(result) ? result : 'other'
}

const noStore = { 'cache-control': 'no-store' }

/**
 * The gate in front of whole sites (docs/gate.md): a reverse proxy asks /gate/v1/check about
 * every request of the protected host (nginx auth_request, Caddy forward_auth, Traefik
 * ForwardAuth) and lets it through on 2xx. A visitor without a valid clearance cookie gets the
 * gate's page instead (403; nginx fetches it from /gate/v1/page), which checks the browser with
 * the SDK, trades the token for the cookie at /gate/v1/clearance (through the same host, under
 * the prefix the proxy forwards to Tollgate) and loads the address again.
 */
const gateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(cookie)
  const gateKey = app.keyRing.macKeyFor('gate')
  const lifetimeMs = app.config.gateClearanceSeconds * 1000

  /** The site of a public key; a key the cache does not know costs a database query, rate limited per client. */
  async function siteOf(request: FastifyRequest, siteKey: string): Promise<Site> {
    // A key no site can have (a NUL, a space) names no site, as an unknown one: not a lookup.
    if (!SITE_KEY_PATTERN.test(siteKey)) throw new ApiError('invalid_site_key', UNKNOWN_SITE_KEY)
    let site = testSiteFor(siteKey) ?? app.siteCache.peekBySiteKey(siteKey)
    if (site === undefined) {
      if (app.config.rateLimitPerMinute > 0) {
        const verdict = await consumeRateLimit(app.keyValue, `site-lookup:${app.clientTags.ofGroup(request.ip)}`, {
          limit: app.config.rateLimitPerMinute,
          windowMs: 60_000,
        })
        if (!verdict.isAllowed) throw new ApiError('rate_limited', undefined, undefined, { 'retry-after': String(verdict.retryAfterSeconds) })
      }
      site = (await app.siteCache.findBySiteKey(siteKey)) ?? null
    }
    if (site === null) throw new ApiError('invalid_site_key', UNKNOWN_SITE_KEY)
    return site
  }

  function holderOf(request: FastifyRequest, site: Site): ClearanceHolder {
    return { siteId: site.id, userAgent: request.headers['user-agent'] ?? '', addressGroup: addressGroupOf(request.ip) }
  }

  /**
   * Sets the clearance cookie until `expiresAt`. SameSite=None on https, so that a cleared
   * visitor's cross-site POST (a sign-in provider's form_post, a payment's return) keeps its
   * cookie and its body: the cookie authorises nothing a forged request could use. Browsers take
   * None only with Secure, so plain http (development) gets Lax.
   */
  function setClearance(reply: FastifyReply, holder: ClearanceHolder, expiresAt: number, terms: { since: number; isSecure: boolean }, now: number): void {
    void reply.setCookie(CLEARANCE_COOKIE, issueClearance(gateKey, holder, expiresAt, terms), {
      path: '/',
      maxAge: Math.ceil((expiresAt - now) / 1000),
      httpOnly: true,
      sameSite: terms.isSecure ? 'none' : 'lax',
      secure: terms.isSecure,
    })
  }

  /** The gate's page, or for a caller that does not read HTML the error it stands for. */
  function answerUncleared(request: FastifyRequest<{ Querystring: CheckQueryFields }>, reply: FastifyReply, site: Site) {
    void reply.code(403).headers(noStore)
    if (!wantsPage(request)) return reply.send(errorBody('clearance_required', request.id))
    const language = negotiateLanguage(request.headers['accept-language'])
    return reply
      .headers({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': GATE_PAGE_POLICY, 'x-content-type-options': 'nosniff', 'content-language': language })
      .send(renderGatePage({
        siteKey: site.siteKey,
        prefix: request.query.prefix ?? DEFAULT_GATE_PREFIX,
        method: firstOf(request.headers['x-forwarded-method']),
        language,
        strings: gateStringsIn(language),
        helpUrl: site.settings.blockedHelpUrl,
      }))
  }

  const uncleared = { 400: PublicErrorResponse, 401: PublicErrorResponse, 403: PublicErrorResponse, 429: PublicErrorResponse }
  // The check's refusal and the page's answer: the page itself (HTML) for a browser, else the JSON
  // error. Documented with both media types, so that a client generated from the document knows
  // the page is the answer (it is a 403: nginx's error_page serves it as the refusal it is).
  const refusedWithPage = {
    ...uncleared,
    403: {
      description:
        "The gate's page (text/html) for a caller whose Accept names text/html, a browser; else the error `clearance_required` (application/json)",
      content: {
        'text/html': { schema: Type.String({ description: "The gate's page: it solves the challenge and trades the token for the clearance cookie" }) },
        'application/json': { schema: PublicErrorResponse },
      },
    },
  }

  app.get('/gate/v1/check', {
    schema: {
      tags: ['gate'],
      summary: 'Whether a visitor of a protected host may pass',
      description:
        "For a reverse proxy (nginx auth_request, Caddy forward_auth, Traefik ForwardAuth) asking about each request of the protected host, with the visitor's Cookie, User-Agent and X-Forwarded-For. 204 with a valid clearance cookie (with a renewed tollgate_clearance cookie in Set-Cookie, for the proxy to pass on, when the one sent is past half its life, up to 12 times GATE_CLEARANCE_SECONDS after the page's check), or from an address of the site's allowlist; 403 from an address or a country of the site's blocklist (whose page's verification is then blocked), whatever its cookie; otherwise 403: the gate's page (text/html) for a browser that accepts HTML, else the JSON error clearance_required.",
      querystring: CheckQuery,
      errorCodes: ['invalid_site_key', 'clearance_required', 'rate_limited'],
      response: { 204: Type.Null(), ...refusedWithPage },
    },
    errorHandler: (error) => {
      app.counters.increment('gateChecks', { result: resultOf(error) })
      throw error
    },
  }, async (request, reply) => {
    const site = await siteOf(request, request.query.sitekey)
    // The site's own addresses (an uptime monitor, an office) pass without a cookie, as they
    // pass the SDK's checks unjudged.
    if (isAddressAllowed(site.settings.allowedAddresses, request.ip)) {
      app.counters.increment('gateChecks', { result: 'allowed_address' })
      return reply.code(204).headers(noStore).send(null)
    }
    // An address or a country the site blocks does not pass, not even with a clearance it got
    // before the block: it gets the page, whose verification is blocked with a reference, logged
    // and announced as the SDK's are. Sites without a blocklist pay one length check, and the
    // country is looked up (alone, not the whole network profile) only for a site that blocks
    // countries and an address its address list does not block.
    if (hasBlocklist(site.settings) && (await isBlocklisted(site.settings, request.ip, (ip) => app.network.countryCode(ip)))) {
      app.counters.increment('gateChecks', { result: 'blocked' })
      return answerUncleared(request, reply, site)
    }
    // Any of the request's clearance cookies lets it through (clearancesIn: a few at most).
    const holder = holderOf(request, site)
    const now = Date.now()
    let terms: ClearanceTerms | null = null
    for (const clearance of clearancesIn(request.headers.cookie)) {
      terms = readClearance(gateKey, clearance, holder, now)
      if (terms !== null) break
    }
    if (terms !== null) {
      app.counters.increment('gateChecks', { result: 'cleared' })
      // Sliding: a clearance past half its life is renewed on the check's answer, which the
      // proxy passes on to the browser (docs/gate.md), up to its absolute cap (renewalOf).
      const renewal = renewalOf(terms, lifetimeMs, now)
      if (renewal !== null) setClearance(reply, holder, renewal.expiresAt, { since: renewal.since, isSecure: terms.isSecure }, now)
      return reply.code(204).headers(noStore).send(null)
    }
    app.counters.increment('gateChecks', { result: 'refused' })
    return answerUncleared(request, reply, site)
  })

  // nginx's auth_request reads only the check's status; its error_page then fetches the page
  // here (the check's answer, not counted as a second check).
  app.get('/gate/v1/page', {
    schema: {
      tags: ['gate'],
      summary: "The gate's page, for nginx's error_page after a refused check",
      querystring: CheckQuery,
      description:
        "Answers what the check answers a caller it refuses, without a check (nothing is counted): 403 with the gate's page (text/html) for a caller whose Accept names text/html, " +
        'else the error clearance_required. It never answers 2xx: nginx\'s error_page serves the page as the refusal (docs/gate.md). ' +
        'That 403 is its normal answer, not a failure: a client asking with Accept text/html (one generated from this document included) reads its body as text, the page\'s HTML.',
      errorCodes: ['invalid_site_key', 'clearance_required', 'rate_limited'],
      response: refusedWithPage,
    },
  }, async (request, reply) => answerUncleared(request, reply, await siteOf(request, request.query.sitekey)))

  app.post('/gate/v1/clearance', {
    schema: {
      tags: ['gate'],
      summary: "Trade a token for the gate's clearance cookie",
      description:
        "Called by the gate's page, through the protected host: redeems a token of that host's page (once; Siteverify refuses it afterwards) and sets the tollgate_clearance cookie for that host. 403 token_invalid for a token that is forged, changed, another site's or another host's, or not an allow, for a call without Origin, and for a token earned at another address when the site's tokenAddressCheck is refuse; 409 token_spent when it expired or was used.",
      body: ClearanceBody,
      errorCodes: ['invalid_site_key', 'token_invalid', 'token_spent', 'rate_limited'],
      response: { 204: Type.Null(), ...uncleared, 409: PublicErrorResponse },
    },
    errorHandler: (error) => {
      app.counters.increment('gateClearances', { result: resultOf(error) })
      throw error
    },
  }, async (request, reply) => {
    const site = await siteOf(request, request.body.siteKey)
    // The page's own origin, as the browser sent it: the cookie is for that host, and the token
    // must have been issued to a page of it (hostnames compared as the token has them: no IPv6
    // brackets, no trailing dot).
    const originHeader = request.headers.origin
    const { hostname } = readRequestOrigin(originHeader, undefined)
    if (originHeader === undefined || hostname === null) {
      throw new ApiError('token_invalid', "The clearance is asked for from the gate's page, whose request carries an Origin.")
    }
    const now = Date.now()
    // The token by the store's clock, as Siteverify judges it (tokens are stamped by it); the
    // clearance by this instance's.
    const storeNow = app.keyValue.now()
    const reading = readToken(app.keyRing.macKeyFor('token'), request.body.token, storeNow)
    if (reading.outcome === 'invalid') throw new ApiError('token_invalid')
    const { claims } = reading
    if (claims.siteId !== site.id) throw new ApiError('token_invalid', "The token is another site's.")
    if (claims.hostname !== hostname) throw new ApiError('token_invalid', `The token was issued to a page of ${claims.hostname ?? 'no host'}, not of ${hostname}.`)
    if (claims.action !== 'allow') throw new ApiError('token_invalid', 'The token does not allow its visitor in.')
    // A site that refuses tokens of other addresses (Siteverify's remoteip check) refuses them here too;
    // only such a site pays for tagging the request's address.
    const { tokenAddressCheck } = site.settings
    if (tokenAddressCheck === 'refuse' && refusesAddress(tokenAddressCheck, matchesAddressClaim(claims.address, addressClaimOf(request.ip, app.clientTags.ofAddress)))) {
      throw new ApiError('token_invalid', 'The token was earned at another address than the one asking for the clearance.')
    }
    if (isPastLifetime(reading, storeNow) || mayHaveForgottenRedemption(claims, app.keyValue.remembersSince(), app.keyValue.dataEpoch())) throw new ApiError('token_spent')
    // The same single-use marker as Siteverify's, so that a token spent here is spent there too.
    const isFirst = await app.keyValue.setIfAbsent(redemptionKey(claims.challengeId), 'gate', markerTimeToLiveMs(reading.expiresAt, storeNow))
    if (!isFirst) throw new ApiError('token_spent')
    // Secure and SameSite=None for an https page (setClearance).
    setClearance(reply, holderOf(request, site), now + lifetimeMs, { since: now, isSecure: originHeader.startsWith('https:') }, now)
    app.counters.increment('gateClearances', { result: 'issued' })
    return reply.code(204).headers(noStore).send(null)
  })
}

export default gateRoutes
