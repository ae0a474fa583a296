import { randomBytes } from 'node:crypto'
import type { App } from '../../src/app.js'
import { currentSetupCode } from '../../src/routes/v1/accounts/announce-setup-code.js'

/** What inject() gives as Host by default, and so the Origin our own pages would send. */
export const OWN_ORIGIN = 'http://localhost'

export interface TestAccount {
  id: string
  email: string
  password: string
  /** The Cookie header of a logged-in session. */
  cookie: string
  /** An API key of the account. */
  apiKey: string
}

/**
 * A fresh client address per call, from the documentation range 2001:db8::/32 (never routed),
 * so that helpers creating many accounts stay within the per-IP sign-up and log-in budgets.
 */
export function randomClientAddress(): string {
  const groups = Array.from({ length: 6 }, () => randomBytes(2).toString('hex'))
  return `2001:db8:${groups.join(':')}`
}

export function randomEmail(): string {
  return `operator-${randomBytes(6).toString('hex')}@example.com`
}

/** The Cookie header that carries the session a log-in answer set. */
export function sessionCookieOf(setCookie: string | string[] | undefined): string {
  const header = (Array.isArray(setCookie) ? setCookie : [setCookie ?? '']).find((cookie) => /^(__Host-)?tollgate_session=/.test(cookie))
  if (header === undefined) throw new Error('the answer set no tollgate_session cookie')
  return header.split(';')[0] ?? ''
}

/** Headers of a browser on our own pages: the session cookie and our Origin. */
export function asBrowser(account: Pick<TestAccount, 'cookie'>): Record<string, string> {
  return { cookie: account.cookie, origin: OWN_ORIGIN }
}

export function asScript(account: Pick<TestAccount, 'apiKey'>): Record<string, string> {
  return { authorization: `Bearer ${account.apiKey}` }
}

/**
 * Signs up, logs in and creates an API key (full, never expiring), each through the HTTP API. `origin` is the service's
 * own origin as the app under test sees it (PUBLIC_URL when that is set).
 */
export async function createTestAccount(app: App, options: { email?: string; origin?: string } = {}): Promise<TestAccount> {
  const email = options.email ?? randomEmail()
  const password = `password-${randomBytes(8).toString('hex')}`
  const remoteAddress = randomClientAddress()
  // The setup code matters only to a server's first account under SIGNUPS=first; others ignore it.
  const setupCode = await currentSetupCode(app)
  const signUp = await app.inject({ method: 'POST', url: '/api/v1/accounts', payload: { email, password, setupCode }, remoteAddress })
  if (signUp.statusCode !== 201) throw new Error(`sign-up answered ${signUp.statusCode}: ${signUp.body}`)
  const logIn = await app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email, password }, remoteAddress })
  if (logIn.statusCode !== 200) throw new Error(`log-in answered ${logIn.statusCode}: ${logIn.body}`)
  const cookie = sessionCookieOf(logIn.headers['set-cookie'])
  // The key's password is checked within the log-in budgets: from the log-in's browser (its known-
  // device cookie spares the account's budget from everywhere) and address, as the dashboard would.
  const device = [logIn.headers['set-cookie'] ?? []].flat().find((header) => /^(__Host-)?tollgate_device=/.test(header))?.split(';')[0]
  const apiKey = await app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: { cookie: device === undefined ? cookie : `${cookie}; ${device}`, origin: options.origin ?? OWN_ORIGIN },
    payload: { name: 'test key', password },
    remoteAddress,
  })
  if (apiKey.statusCode !== 201) throw new Error(`API key creation answered ${apiKey.statusCode}: ${apiKey.body}`)
  return { id: signUp.json<{ id: string }>().id, email, password, cookie, apiKey: apiKey.json<{ key: string }>().key }
}

export interface CreatedSite {
  id: string
  name: string
  siteKey: string
  secretKey: string
  domains: string[]
  settings: Record<string, unknown>
  createdAt: string
  updatedAt: string
}

/** Creates a site through the HTTP API as the account's script. */
export async function createTestSite(app: App, account: Pick<TestAccount, 'apiKey'>, body: object = {}): Promise<CreatedSite> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/sites',
    headers: asScript(account),
    payload: { name: 'Test site', ...body },
  })
  if (response.statusCode !== 201) throw new Error(`site creation answered ${response.statusCode}: ${response.body}`)
  return response.json<CreatedSite>()
}
