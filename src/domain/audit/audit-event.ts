import { createHash } from 'node:crypto'
import { defaultSiteSettings, livePreviousWebhookSecret, type Site, type SiteSettings } from '../sites/site.js'
import type { AuditAction } from './audit-actions.js'

export { AUDIT_ACTIONS, type AuditAction } from './audit-actions.js'

/** session and api-key: the dashboard API's two credentials; operator: `npm run account` on the server. */
export type AuditActorType = 'session' | 'api-key' | 'operator' | 'anonymous'

export interface AuditActor {
  type: AuditActorType
  /** The session's or API key's id. */
  id: string | null
  /** The account's e-mail address for a session, the key's name for an API key. */
  name: string | null
  keyPrefix: string | null
  clientIp: string | null
  userAgent: string | null
  /**
   * The account that acted, for a session or an API key (migration 037): its id and its e-mail
   * address at the time, so that a key named by its member ("alice-laptop") says whose it is.
   * Null for the other actors and for events written before; left out, it is stored as null.
   */
  accountId?: string | null
  email?: string | null
}

export interface NewAuditEvent {
  accountId: string
  action: AuditAction
  actor: AuditActor
  site?: Pick<Site, 'id' | 'name'>
  details?: Record<string, unknown>
}

/** Where a request came from, as an actor records it: its client address and browser. */
export function requestOriginOf(request: { ip: string; headers: { 'user-agent'?: string } }): Pick<AuditActor, 'clientIp' | 'userAgent'> {
  return { clientIp: request.ip, userAgent: request.headers['user-agent'] ?? null }
}

/** An API key as the actor of an event: the key, the account whose it is, and where the request came from. */
export function apiKeyActorOf(
  key: { id: string; name: string; prefix: string },
  account: { accountId: string | null; email: string | null },
  origin: Pick<AuditActor, 'clientIp' | 'userAgent'>,
): AuditActor {
  return { type: 'api-key', id: key.id, name: key.name, keyPrefix: key.prefix, ...origin, ...account }
}

/** The server's own account script: no address, no browser. */
export const OPERATOR_ACTOR: AuditActor = { type: 'operator', id: null, name: null, keyPrefix: null, clientIp: null, userAgent: null }

/** One field of a site that an update changed, with its values before and after. */
export interface SiteFieldChange {
  field: 'name' | 'domains' | 'webhookSecret' | 'previousWebhookSecret' | keyof SiteSettings
  /**
   * For webhookSecret, whether a secret was set: the secret itself is never recorded. For
   * previousWebhookSecret, until when the replaced secret signs beside it (null: it does not).
   */
  from: unknown
  to: unknown
}

type SiteFields = Pick<Site, 'name' | 'domains' | 'settings' | 'webhookSecretCiphertext' | 'previousWebhookSecret'>

/** Until when the replaced webhook secret signs, as recorded: null once it signs no more. */
const previousSecretExpiryOf = (site: SiteFields, now: number) => livePreviousWebhookSecret(site, now)?.expiresAt.toISOString() ?? null

const settingNames = (before: SiteSettings, after: SiteSettings) => [...new Set([...Object.keys(before), ...Object.keys(after)])] as (keyof SiteSettings)[]

const isSame = (first: unknown, second: unknown) => JSON.stringify(first) === JSON.stringify(second)

/**
 * A webhook URL as the audit log keeps it: its origin and a digest of the rest. Chat services'
 * webhook URLs (Slack's, Discord's, Teams') carry their own secret in the path, and the log keeps
 * an old one for a year after it was replaced; the digest still tells two URLs apart.
 */
export function redactWebhookUrl(url: string | null): string | null {
  if (url === null) return null
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `(${digestOf(url)})`
  }
  const rest = `${parsed.pathname}${parsed.search}`
  return rest === '/' && parsed.username === '' ? parsed.origin : `${parsed.origin}/… (${digestOf(url)})`
}

const digestOf = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8)

/** A setting's value as recorded: the webhook URL redacted, anything else as it is. */
const recorded = (name: keyof SiteSettings, value: unknown) => (name === 'webhookUrl' ? redactWebhookUrl(value as string | null) : value)

/**
 * The fields an update changed, in a stable order. A webhook secret replaced by another counts as
 * a change (true -> true): both are stored sealed, and the audit log has no business opening them,
 * so the caller, which compared them, says so (a secret sent again as it is stored is no change,
 * and no update at all when nothing else changes). The replaced secret's overlap starting or ending
 * (previousWebhookSecretExpiresAt: null, the reaction to a leaked secret) is a change too.
 */
export function siteChangesBetween(before: SiteFields, after: SiteFields, isWebhookSecretReplaced: boolean, now = Date.now()): SiteFieldChange[] {
  const changes: SiteFieldChange[] = []
  if (before.name !== after.name) changes.push({ field: 'name', from: before.name, to: after.name })
  if (!isSame(before.domains, after.domains)) changes.push({ field: 'domains', from: before.domains, to: after.domains })
  for (const name of settingNames(before.settings, after.settings)) {
    if (!isSame(before.settings[name], after.settings[name])) {
      changes.push({ field: name, from: recorded(name, before.settings[name]), to: recorded(name, after.settings[name]) })
    }
  }
  const hadSecret = before.webhookSecretCiphertext !== null
  const hasSecret = after.webhookSecretCiphertext !== null
  if (hadSecret !== hasSecret || (isWebhookSecretReplaced && hasSecret)) changes.push({ field: 'webhookSecret', from: hadSecret, to: hasSecret })
  const [previousFrom, previousTo] = [previousSecretExpiryOf(before, now), previousSecretExpiryOf(after, now)]
  if (previousFrom !== previousTo) changes.push({ field: 'previousWebhookSecret', from: previousFrom, to: previousTo })
  return changes
}

/** The settings a new site was made with that are not the defaults (from: the default), its webhook secret included. */
export function nonDefaultSettingsOf(site: SiteFields): SiteFieldChange[] {
  const blank = { name: site.name, domains: site.domains, settings: defaultSiteSettings, webhookSecretCiphertext: null, previousWebhookSecret: null }
  return siteChangesBetween(blank, site, false)
}
