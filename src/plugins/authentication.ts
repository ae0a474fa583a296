import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import { isMethodAllowed, type ApiKeyAccess } from '../domain/accounts/api-key-access.js'
import { repeatedHourOf } from '../domain/audit/audit-actions.js'
import { apiKeyActorOf, requestOriginOf } from '../domain/audit/audit-event.js'
import { bearerTokenOf, hashToken, isApiKeyShaped } from '../domain/accounts/tokens.js'
import { isUuid } from '../domain/uuid.js'
import type { Site } from '../domain/sites/site.js'
import { isAllowed, needsTwoFactor, SITE_REQUIRES_TWO_FACTOR_MESSAGE, type SiteAccess, type SiteRole } from '../domain/sites/site-roles.js'
import { ApiError } from '../errors.js'
import { createAccountRepository, type AccountRepository } from '../storage/sql/account-repository.js'
import { createApiKeyRepository, type ApiKeyRepository } from '../storage/sql/api-key-repository.js'
import { createAuditLogRepository } from '../storage/sql/audit-log-repository.js'
import { createSessionRepository, type SessionRepository } from '../storage/sql/session-repository.js'
import { createSiteMemberRepository } from '../storage/sql/site-member-repository.js'
import { createTwoFactorRepository } from '../storage/sql/two-factor-repository.js'

export const SESSION_COOKIE = 'tollgate_session'

/**
 * A cookie's name as set in this environment. In production it carries the __Host- prefix:
 * browsers accept such a cookie only from this host, Secure, for the whole path and without a
 * Domain, so a cookie planted from a sibling subdomain cannot stand in for (or shadow) the real
 * one. Plain-http development cannot set Secure cookies, so it keeps the bare name.
 */
export function hostCookieName(name: string, config: Pick<Config, 'environment'>): string {
  return config.environment === 'production' ? `__Host-${name}` : name
}

export function sessionCookieName(config: Pick<Config, 'environment'>): string {
  return hostCookieName(SESSION_COOKIE, config)
}
export const SESSION_LIFETIME_MS = 14 * 24 * 3_600_000

/** What the site routes answer for a site the account has no part in (or that is gone). */
export const SITE_NOT_FOUND_MESSAGE = 'There is no site with this id in your account or shared with it.'

/** A site, and the requesting account's role on it. */
export interface AccessibleSite {
  site: Site
  role: SiteRole
}

/** Why a member's role does not allow what was asked, in words that say whom to ask. */
function refusalFor(role: SiteRole, access: SiteAccess): string {
  if (access === 'own') return "Only the site's owner may do this (delete the site, or make a member its owner); admins may do everything else."
  return `You are a ${role} of this site: you can read it, not change it. Its owner or an admin can make you an admin.`
}

/**
 * The account's role on a site when it allows `access`: 404 not_found when it has none (no
 * member, or the site is gone), 403 forbidden when its role does not allow it. findSite asks it
 * before a request's work, auditedSiteTransaction again under the site's lock.
 */
export function allowedRole(role: SiteRole | undefined, access: SiteAccess): SiteRole {
  if (role === undefined) throw new ApiError('not_found', SITE_NOT_FOUND_MESSAGE)
  if (!isAllowed(role, access)) throw new ApiError('forbidden', refusalFor(role, access))
  return role
}

/**
 * 403 site_requires_two_factor when the site's owner requires two-factor authentication of its
 * members and the requester is a member whose account has it off (needsTwoFactor). Asked with the
 * role, by findSite and again by auditedSiteTransaction; the account's row is read only then.
 */
export async function refuseWithoutTwoFactor(
  site: Pick<Site, 'settings'>,
  role: SiteRole,
  access: SiteAccess,
  hasTwoFactor: () => Promise<boolean>,
): Promise<void> {
  if (needsTwoFactor(site, role, access) && !(await hasTwoFactor())) throw new ApiError('site_requires_two_factor', SITE_REQUIRES_TWO_FACTOR_MESSAGE)
}

export interface AuthenticatedAccount {
  id: string
  email: string
}

/** How the request proved who it is: the session cookie or an API key. */
export type Authentication =
  | { method: 'session'; sessionId: string }
  /**
   * The key's name and prefix, for the audit log's record of what the key did, and what it may do:
   * its access, and the sites it may reach (null: every site of the account; siteScopeOf).
   */
  | { method: 'api-key'; apiKeyId: string; name: string; prefix: string; access: ApiKeyAccess; siteIds: readonly string[] | null }

declare module 'fastify' {
  interface FastifySchema {
    /**
     * What the route does, when only a logged-in session (the dashboard) may do it ('log out'):
     * app.authenticate answers an API key 403 forbidden saying so, and the OpenAPI document lists
     * only the session as the route's credential (plugins/docs.ts), both from this one marker.
     */
    sessionOnly?: string
    /**
     * What only a logged-in session may do on a route that takes API keys otherwise ('widen an API
     * key'): its handler refuses a key that asks for it, and may then read the session (sessionIdOf).
     */
    sessionOnlyPart?: string
  }
  interface FastifyInstance {
    accounts: AccountRepository
    sessions: SessionRepository
    apiKeys: ApiKeyRepository
    /**
     * A hook (use it as onRequest, so that 401 comes before body validation; it works as a
     * preHandler too) that sets request.account or throws 401 unauthorized (an expired API key
     * too), 403 csrf_rejected for a cookie-authenticated state-changing request that does not come
     * from our own pages, and 403 forbidden for a read-only API key's request other than GET or HEAD
     * and for an API key on a route only a session may use (schema.sessionOnly).
     */
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
    /**
     * The site with this id if the authenticated account may do what `access` names there (as its
     * owner or a member of it), with the account's role: 404 not_found for any id the account has
     * no part in, UUID or not; 403 forbidden for a member whose role does not allow it, and 403
     * site_requires_two_factor for a member without two-factor authentication on a site that
     * requires it (refuseWithoutTwoFactor). A change
     * asks again under the site's lock (auditedSiteTransaction): this answer may be stale by then.
     */
    findSite: (request: FastifyRequest, siteId: string, access: SiteAccess) => Promise<AccessibleSite>
  }
  interface FastifyRequest {
    account: AuthenticatedAccount | null
    authentication: Authentication | null
  }
}

/** The account app.authenticate set; throws 401 when the route forgot to authenticate. */
export function accountOf(request: FastifyRequest): AuthenticatedAccount {
  if (request.account === null) throw new ApiError('unauthorized')
  return request.account
}

/**
 * The sites the request may reach at most: those of its API key's list when the key was made for
 * some sites only, undefined (every site the account reaches) for a session or a key for all of
 * them. findSite answers a site outside it as one the account has no part in; the routes that
 * reach several sites at once keep to it (siteScopeOf's callers), and those that would reach
 * sites outside it (creating one) refuse with refuseSiteRestrictedKey.
 */
export function siteScopeOf(request: FastifyRequest): readonly string[] | undefined {
  const authentication = request.authentication
  return authentication?.method === 'api-key' && authentication.siteIds !== null ? authentication.siteIds : undefined
}

/** Whether the request may reach the site with this (lower-case) id, by its API key's site list. */
export function reachesSite(request: FastifyRequest, siteId: string): boolean {
  const scope = siteScopeOf(request)
  return scope === undefined || scope.includes(siteId)
}

/** What an API key made for some sites only answers on a route that would reach others: 403 api_key_site_restricted. */
export function refuseSiteRestrictedKey(request: FastifyRequest, action: string): void {
  if (siteScopeOf(request) !== undefined) {
    throw new ApiError('api_key_site_restricted', `This API key was made for some sites only: it cannot ${action}. A key for all sites, or the dashboard, can.`)
  }
}

/** The 403 an API key gets on a route only a logged-in session may use (schema.sessionOnly names what it does). */
function refusedToApiKeys(action: string): ApiError {
  return new ApiError('forbidden', `Only a logged-in session (the dashboard) may ${action}, not an API key.`)
}

/**
 * The id of the request's session, on a route only a logged-in session (the dashboard) may use:
 * one whose schema.sessionOnly says so, for which app.authenticate answered an API key (which, if
 * it leaked, must not take the account over) 403 forbidden already. A route that is not marked
 * fails here whoever calls it, so that the document never offers an API key a route refuses; one
 * that takes keys but for a part of what it does names that part (schema.sessionOnlyPart).
 */
export function sessionIdOf(request: FastifyRequest): string {
  const action = request.routeOptions.schema?.sessionOnly ?? request.routeOptions.schema?.sessionOnlyPart
  if (action === undefined) throw new Error(`${request.method} ${request.routeOptions.url ?? request.url} reads the session but its schema has no sessionOnly`)
  const authentication = request.authentication
  if (authentication?.method !== 'session') throw refusedToApiKeys(action)
  return authentication.sessionId
}

/**
 * What to throw when something could not be created for the authenticated account: 401 when the
 * account was deleted meanwhile (its sessions and keys went with it), else the conflict named
 * (`code`: conflict unless told).
 */
export async function creationRefused(
  app: FastifyInstance,
  request: FastifyRequest,
  conflictMessage: string,
  code: 'conflict' | 'site_limit_reached' = 'conflict',
): Promise<ApiError> {
  const account = await app.accounts.findById(accountOf(request).id)
  return account === undefined ? new ApiError('unauthorized', 'The account was deleted.') : new ApiError(code, conflictMessage)
}

/**
 * Whether an Authorization header names an API key (the Bearer scheme): a request that does is
 * judged by that key alone, never by a cookie it also carries. Another scheme is not ours: a
 * proxy's Basic credentials in front of the dashboard, which the browser then sends with every
 * request beside the session cookie.
 */
export function namesApiKey(authorization: string | undefined): authorization is string {
  return authorization !== undefined && /^\s*bearer(\s|$)/i.test(authorization)
}

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The service's own origin: PUBLIC_URL, else the request's; what pages, and links to them, are served from. */
export function expectedOrigin(request: FastifyRequest, config: Pick<Config, 'publicUrl'>): string | undefined {
  if (config.publicUrl !== undefined) return config.publicUrl
  try {
    return new URL(`${request.protocol}://${request.host}`).origin
  } catch {
    return undefined
  }
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}

/**
 * Whether the browser says the request comes from the service's own pages. Browsers send Origin
 * on every cross-origin and every POST/PUT/DELETE fetch, and pages cannot forge it; Referer is
 * the fallback for older clients. Neither header means "not proven", which is refused.
 */
export function isFromOwnOrigin(request: FastifyRequest, config: Pick<Config, 'publicUrl'>): boolean {
  const expected = expectedOrigin(request, config)
  if (expected === undefined) return false
  const { origin, referer } = request.headers
  if (origin !== undefined) return origin === expected
  return referer !== undefined && originOf(referer) === expected
}

/**
 * 403 csrf_rejected, naming the Origin this request would have needed, so that a script calling
 * http://127.0.0.1:3000 with "Origin: http://localhost:3000" (or with a trailing slash) sees what
 * to send. The origin named is the one isFromOwnOrigin compares with, which the caller already
 * knows (it chose the URL, or PUBLIC_URL is public), so naming it trusts no header further.
 */
export function csrfRejection(request: FastifyRequest, config: Pick<Config, 'publicUrl'>): ApiError {
  const expected = expectedOrigin(request, config)
  if (expected === undefined) return new ApiError('csrf_rejected')
  return new ApiError(
    'csrf_rejected',
    `The request did not come from this service's own pages: a script that logs in with a session cookie must send "Origin: ${expected}" (the scheme, host and port it calls).`,
  )
}

/**
 * Log-in and sign-up carry no credentials yet, so they are not CSRF-checked as such; but a page
 * of another origin must not log a visitor into an account of its choosing (login CSRF). Scripts
 * send no Origin and are unaffected.
 */
export function rejectCrossOriginForm(request: FastifyRequest, config: Pick<Config, 'publicUrl'>): void {
  if (request.headers.origin !== undefined && !isFromOwnOrigin(request, config)) throw csrfRejection(request, config)
}

export function setSessionCookie(reply: FastifyReply, token: string, expiresAt: Date, config: Pick<Config, 'environment'>): void {
  void reply.setCookie(sessionCookieName(config), token, {
    path: '/',
    httpOnly: true,
    // Lax keeps the cookie off cross-site POSTs and subresources while a link to the dashboard
    // from elsewhere still lands logged in. Plain-http development cannot use Secure cookies.
    sameSite: 'lax',
    secure: config.environment === 'production',
    expires: expiresAt,
  })
}

export function clearSessionCookie(reply: FastifyReply, config: Pick<Config, 'environment'>): void {
  void reply.clearCookie(sessionCookieName(config), { path: '/', httpOnly: true, sameSite: 'lax', secure: config.environment === 'production' })
}

/**
 * Accounts, sessions and API keys, and the `authenticate` hook of the dashboard API. Session
 * cookies are parsed by @fastify/cookie, which the dashboard API's scope registers
 * (routes/v1/dashboard.ts): the public routes never read cookies and do not pay for parsing them.
 */
async function authenticationPlugin(app: FastifyInstance): Promise<void> {
  const accounts = createAccountRepository(app.database)
  const sessions = createSessionRepository(app.database)
  const apiKeys = createApiKeyRepository(app.database)
  const members = createSiteMemberRepository(app.database)
  const auditLog = createAuditLogRepository(app.database)
  const twoFactor = createTwoFactorRepository(app.database)

  app.decorate('accounts', accounts)
  app.decorate('sessions', sessions)
  app.decorate('apiKeys', apiKeys)
  app.decorateRequest('account', null)
  app.decorateRequest('authentication', null)

  const cookieName = sessionCookieName(app.config)

  async function authenticateWithApiKey(request: FastifyRequest, authorization: string): Promise<void> {
    const key = bearerTokenOf(authorization)
    if (key === undefined) throw new ApiError('unauthorized', 'The Authorization header must be "Bearer <API key>".')
    // A site's secret key (tgs_...) is the likeliest mistake: it is for Siteverify, not for this API.
    if (!isApiKeyShaped(key)) throw new ApiError('unauthorized', 'The API key is unknown or has been revoked (API keys are made in the dashboard, under API keys; a site\'s secret key is for Siteverify only).')
    const use = await apiKeys.useByKeyHash(hashToken(key), request.ip)
    if (use === undefined) throw new ApiError('unauthorized', 'The API key is unknown or has been revoked.')
    // Said to the key's holder only, who knows the account exists: the operator has to enable it.
    if (use.outcome === 'account_disabled') throw new ApiError('unauthorized', "The API key's account has been disabled by the operator of this service.")
    if (use.outcome === 'expired') {
      throw new ApiError('unauthorized', `The API key expired at ${use.expiresAt.toISOString()}; make a new one in the dashboard.`)
    }
    if (use.outcome === 'address_refused') {
      // Told to the holder, who has the key, with the address seen (a proxy's, without TRUST_PROXY),
      // not the list: whoever found the key elsewhere learns no address to try it from. A leaked
      // key being tried is worth knowing of: the operator reads it in the server's log, the
      // account in its audit log (one event an hour, counting the attempts and their addresses).
      request.log.warn({ apiKeyId: use.apiKeyId, apiKeyPrefix: use.prefix, clientIp: request.ip }, 'an API key was refused: the request came from an address its list does not hold')
      const actor = apiKeyActorOf({ id: use.apiKeyId, name: use.name, prefix: use.prefix }, { accountId: use.accountId, email: use.email }, requestOriginOf(request))
      const event = { accountId: use.accountId, action: 'api_key.address_refused', actor, details: { apiKeyId: use.apiKeyId, name: use.name, prefix: use.prefix } } as const
      await auditLog
        .recordRepeated(event, repeatedHourOf(Date.now()))
        .catch((error: unknown) => request.log.warn({ err: error }, 'could not record a refused API key in the audit log'))
      throw new ApiError('api_key_address_refused', `This API key may not be used from ${request.ip}: its list of allowed addresses does not hold it.`)
    }
    // Every write of the dashboard API is a POST, PUT or DELETE: refused here, a read key cannot
    // change anything a route added later forgets to guard (revoking itself included).
    if (!isMethodAllowed(use.access, request.method)) {
      throw new ApiError('forbidden', 'This API key is read-only: it can read (GET) but not change anything.')
    }
    const sessionOnly = request.routeOptions.schema?.sessionOnly
    if (sessionOnly !== undefined) throw refusedToApiKeys(sessionOnly)
    request.account = { id: use.accountId, email: use.email }
    request.authentication = { method: 'api-key', apiKeyId: use.apiKeyId, name: use.name, prefix: use.prefix, access: use.access, siteIds: use.siteIds }
  }

  app.decorate('authenticate', async (request: FastifyRequest) => {
    const { authorization } = request.headers
    if (namesApiKey(authorization)) return authenticateWithApiKey(request, authorization)
    const token = request.cookies[cookieName]
    if (token === undefined || token === '') {
      throw new ApiError('unauthorized', authorization === undefined ? undefined : 'Log in, or send "Authorization: Bearer <API key>"; this request\'s Authorization header names another scheme.')
    }
    const session = await sessions.findByTokenHash(hashToken(token), app.config.sessionIdleTimeoutMs)
    if (session === undefined) throw new ApiError('unauthorized', 'The session has expired, was left unused too long or was logged out; log in again.')
    // Bearer requests are exempt: a page of another origin can make a browser send cookies, but not an
    // Authorization header (that needs a CORS preflight, which the dashboard API never grants).
    if (!safeMethods.has(request.method) && !isFromOwnOrigin(request, app.config)) throw csrfRejection(request, app.config)
    request.account = { id: session.accountId, email: session.email }
    request.authentication = { method: 'session', sessionId: session.sessionId }
  })

  app.decorate('findSite', async (request: FastifyRequest, siteId: string, access: SiteAccess) => {
    const account = accountOf(request)
    // Unknown, malformed and foreign ids answer alike, so ids of other accounts' sites cannot be
    // probed; so do the sites an API key made for others only is not for, whether the account
    // reaches them or not (they are not even looked up).
    const site = isUuid(siteId) && reachesSite(request, siteId.toLowerCase()) ? await app.sites.findById(siteId) : undefined
    // The membership is read on every request, never cached: one removed, or made a viewer, on
    // any instance is refused by every instance from the next request on.
    if (site === undefined) throw new ApiError('not_found', SITE_NOT_FOUND_MESSAGE)
    const role = allowedRole(site.accountId === account.id ? 'owner' : await members.findRole(site.id, account.id), access)
    await refuseWithoutTwoFactor(site, role, access, () => twoFactor.isEnabled(account.id))
    return { site, role }
  })
}

export default fp(authenticationPlugin, { name: 'authentication', dependencies: ['storage', 'sites'] })
