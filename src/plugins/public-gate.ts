import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { addressGroupOf } from '../domain/history/client-keys.js'
import { isOriginAllowed, readRequestOrigin, type RequestOrigin } from '../domain/public-access/request-origin.js'
import { consumeRateLimit } from '../domain/rate-limit.js'
import { isAddressAllowed } from '../domain/sites/allowed-addresses.js'
import type { Site } from '../domain/sites/site.js'
import { testSiteFor } from '../domain/sites/test-site-keys.js'
import { ApiError } from '../errors.js'

/** Who is calling a public route: set by the gate before the route's handler runs. */
export interface PublicCaller {
  site: Site
  origin: RequestOrigin
  clientIp: string
  /** tagClient() of clientIp under the challenge key: binds challenges to clients. */
  clientTag: string
  /**
   * tagClient() of the client's IPv4 address or IPv6 /64 (addressGroupOf; a host gets a whole /64
   * to rotate through): keys its rate limits and its history, so Redis holds no address in clear.
   */
  groupTag: string
  /** The address is on the site's allowlist: not rate limited, challenged at the base difficulty, allowed unjudged. */
  isAllowedAddress: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    publicCaller: PublicCaller | null
  }
}

export interface PublicGateOptions {
  /** Requests per minute per client (IPv4 address or IPv6 /64), site and route; 0 turns rate limiting off. */
  rateLimitPerMinute: number
}

const SITE_KEY_HEADER = 'x-site-key'
const MAX_SITE_KEY_LENGTH = 128
const PREFLIGHT_MAX_AGE_SECONDS = 600

/** The caller set by the gate; a route behind the gate that finds none has a wiring bug. */
export function callerOf(request: FastifyRequest): PublicCaller {
  if (request.publicCaller === null) throw new Error('public route reached without the public gate')
  return request.publicCaller
}

/**
 * CORS for the SDK. A preflight carries no X-Site-Key, so it cannot know the site: it is answered
 * for any origin, and the real request then enforces the site's domains (403 before anything
 * happens). Every answer, errors included, echoes the Origin so that the SDK can read the error
 * code; nothing is readable that the caller did not cause, and no credentials are allowed.
 */
function writeCorsHeaders(request: FastifyRequest, reply: FastifyReply): void {
  const origin = request.headers.origin
  if (origin === undefined) return
  void reply.headers({
    'access-control-allow-origin': origin,
    // Date lets the SDK judge a challenge's remaining life by this service's clock, not the device's.
    'access-control-expose-headers': 'Retry-After, X-Request-Id, Date',
    vary: 'Origin',
  })
}

function answerPreflight(reply: FastifyReply): FastifyReply {
  return reply
    .headers({
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'Content-Type, X-Site-Key',
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
    })
    .code(204)
    .send()
}

/**
 * The gate of the public (SDK) routes, in order: CORS headers; the site named by X-Site-Key,
 * from the in-memory site cache (401 invalid_site_key); the rate limit per client (IPv4 address
 * or IPv6 /64), site and route (429 rate_limited, Retry-After); the site's registered domains
 * against Origin or Referer (403 origin_not_allowed; neither header is served and scored as
 * missing_origin).
 * Registered inside the public routes' scope only.
 */
async function publicGatePlugin(app: FastifyInstance, options: PublicGateOptions): Promise<void> {
  app.decorateRequest('publicCaller', null)
  const clientTagOf = app.clientTags.ofAddress

  app.addHook('onRequest', async (request, reply) => {
    writeCorsHeaders(request, reply)
    if (request.method === 'OPTIONS') return answerPreflight(reply)

    const siteKey = request.headers[SITE_KEY_HEADER]
    if (typeof siteKey !== 'string' || siteKey === '' || siteKey.length > MAX_SITE_KEY_LENGTH) {
      throw new ApiError('invalid_site_key')
    }
    // request.ip parses X-Forwarded-For again at every read when proxies are trusted: read it once.
    const clientIp = request.ip
    const clientTag = clientTagOf(clientIp)
    // For IPv4 the group is the address: its tag is clientTag, so the common case costs no second HMAC.
    const group = addressGroupOf(clientIp)
    const groupTag = group === clientIp ? clientTag : clientTagOf(group)
    // Mostly answered from memory. A key the cache does not know costs a database query: each
    // client gets as many of those per minute as requests, so that a flood of made-up keys is
    // turned away before the database.
    let site = testSiteFor(siteKey) ?? app.siteCache.peekBySiteKey(siteKey)
    if (site === undefined) {
      if (options.rateLimitPerMinute > 0) await enforceRateLimit(`site-lookup:${groupTag}`)
      site = (await app.siteCache.findBySiteKey(siteKey)) ?? null
    }
    if (site === null) throw new ApiError('invalid_site_key')

    // The caller is known from here on, so that a refusal below is logged against its site
    // (verify's onError). The budget comes first: a flood from a foreign origin is turned away
    // (429, not logged) like any other instead of writing a log row per request.
    const origin = readRequestOrigin(request.headers.origin, request.headers.referer)
    const isAllowedAddress = isAddressAllowed(site.settings.allowedAddresses, clientIp)
    request.publicCaller = { site, origin, clientIp, clientTag, groupTag, isAllowedAddress }
    if (options.rateLimitPerMinute > 0 && !isAllowedAddress) await enforceRateLimit(`${request.routeOptions.url ?? request.url}:${site.id}:${groupTag}`)

    if (!isOriginAllowed(origin, site.domains)) {
      throw new ApiError('origin_not_allowed', `This site key is not allowed on ${origin.hostname ?? 'an origin without a host'}.`)
    }
  })

  /** Counts a request against the per-minute budget of `key`; over budget, 429 rate_limited with Retry-After. */
  async function enforceRateLimit(key: string): Promise<void> {
    const verdict = await consumeRateLimit(app.keyValue, key, { limit: options.rateLimitPerMinute, windowMs: 60_000 })
    if (!verdict.isAllowed) {
      throw new ApiError('rate_limited', undefined, undefined, { 'retry-after': String(verdict.retryAfterSeconds) })
    }
  }
}

export default fp(publicGatePlugin, { name: 'public-gate', dependencies: ['sites', 'storage'] })
