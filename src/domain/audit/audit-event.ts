import type { Site, SiteSettings } from '../sites/site.js'
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
}

export interface NewAuditEvent {
  accountId: string
  action: AuditAction
  actor: AuditActor
  site?: Pick<Site, 'id' | 'name'>
  details?: Record<string, unknown>
}

/** The server's own account script: no address, no browser. */
export const OPERATOR_ACTOR: AuditActor = { type: 'operator', id: null, name: null, keyPrefix: null, clientIp: null, userAgent: null }

/** One field of a site that an update changed, with its values before and after. */
export interface SiteFieldChange {
  field: 'name' | 'domains' | 'webhookSecret' | keyof SiteSettings
  /** For webhookSecret, whether a secret was set: the secret itself is never recorded. */
  from: unknown
  to: unknown
}

const settingNames = (before: SiteSettings, after: SiteSettings) => [...new Set([...Object.keys(before), ...Object.keys(after)])] as (keyof SiteSettings)[]

const isSame = (first: unknown, second: unknown) => JSON.stringify(first) === JSON.stringify(second)

/**
 * The fields an update changed, in a stable order. A webhook secret sent again counts as a change
 * even when it is the same secret: it is stored sealed anew and cannot be compared without opening
 * both, which the audit log has no business doing.
 */
export function siteChangesBetween(before: Site, after: Site, isWebhookSecretSent: boolean): SiteFieldChange[] {
  const changes: SiteFieldChange[] = []
  if (before.name !== after.name) changes.push({ field: 'name', from: before.name, to: after.name })
  if (!isSame(before.domains, after.domains)) changes.push({ field: 'domains', from: before.domains, to: after.domains })
  for (const name of settingNames(before.settings, after.settings)) {
    if (!isSame(before.settings[name], after.settings[name])) changes.push({ field: name, from: before.settings[name], to: after.settings[name] })
  }
  const hadSecret = before.webhookSecretCiphertext !== null
  const hasSecret = after.webhookSecretCiphertext !== null
  if (hadSecret !== hasSecret || (isWebhookSecretSent && hasSecret)) changes.push({ field: 'webhookSecret', from: hadSecret, to: hasSecret })
  return changes
}
