import { MAX_REPEATED_ADDRESSES, type AuditAction } from '../../../src/domain/audit/audit-actions.js'
import type { AuditActor, AuditEvent } from '../api/types.js'
import { describeUserAgent, formatDateTime, formatNumber } from './format.js'
import { siteFields, type SiteField } from './site-fields.js'
import { referenceOf } from './reference.js'
import { isLabelReason, isVerificationLabel, labelNames, reasonNames } from './verification-labels.js'

/** The actions by what they concern, each named as the activity page's filter offers it. */
export const auditActionGroups: { label: string; actions: { action: AuditAction; label: string }[] }[] = [
  {
    label: 'Account',
    actions: [
      { action: 'account.created', label: 'Account created' },
      { action: 'account.logged_in', label: 'Logged in' },
      { action: 'account.login_failed', label: 'Failed log-in' },
      { action: 'account.logged_out', label: 'Logged out' },
      { action: 'account.password_check_failed', label: 'Wrong current password' },
      { action: 'account.password_changed', label: 'Password changed' },
      { action: 'account.password_set', label: 'Password set on the server' },
      { action: 'account.disabled', label: 'Disabled on the server' },
      { action: 'account.enabled', label: 'Enabled on the server' },
      { action: 'account.sessions_ended', label: 'Logged out on the server' },
      { action: 'session.ended', label: 'Session logged out' },
      { action: 'sessions.ended_others', label: 'Logged out everywhere else' },
    ],
  },
  {
    label: 'Two-factor authentication',
    actions: [
      { action: 'account.two_factor_enabled', label: 'Two-factor turned on' },
      { action: 'account.two_factor_disabled', label: 'Two-factor turned off' },
      { action: 'account.two_factor_asked', label: 'Right password, code asked for' },
      { action: 'account.two_factor_failed', label: 'Wrong two-factor code' },
      { action: 'account.recovery_code_used', label: 'Recovery code used' },
      { action: 'account.recovery_codes_regenerated', label: 'New recovery codes' },
    ],
  },
  {
    label: 'Passkeys',
    actions: [
      { action: 'account.passkey_added', label: 'Passkey added' },
      { action: 'account.passkey_renamed', label: 'Passkey renamed' },
      { action: 'account.passkey_removed', label: 'Passkey removed' },
      { action: 'account.passkey_refused', label: 'Passkey refused' },
    ],
  },
  {
    label: 'API keys',
    actions: [
      { action: 'api_key.created', label: 'API key created' },
      { action: 'api_key.updated', label: 'API key changed' },
      { action: 'api_key.revoked', label: 'API key revoked' },
      { action: 'api_key.address_refused', label: 'API key used from elsewhere' },
    ],
  },
  {
    label: 'Sites',
    actions: [
      { action: 'site.created', label: 'Site created' },
      { action: 'site.updated', label: 'Site changed' },
      { action: 'site.deleted', label: 'Site deleted' },
      { action: 'site.secret_rotated', label: 'Secret key rotated' },
      { action: 'site.previous_secrets_ended', label: 'Previous secret keys stopped' },
      { action: 'verification.labeled', label: 'Verification labeled' },
      { action: 'verification.label_removed', label: 'Verification label removed' },
      { action: 'verifications.deleted', label: "Visitor's verifications deleted" },
    ],
  },
  {
    label: 'Site members',
    actions: [
      { action: 'site.invitation_created', label: 'Invitation made' },
      { action: 'site.invitation_revoked', label: 'Invitation revoked' },
      { action: 'site.member_joined', label: 'Member joined' },
      { action: 'site.member_role_changed', label: 'Member role changed' },
      { action: 'site.member_removed', label: 'Member removed' },
      { action: 'site.member_left', label: 'Member left' },
      { action: 'site.ownership_transferred', label: 'Ownership transferred' },
    ],
  },
]

/** Longer lists (a site's allowed addresses) are cut after this many entries in a sentence. */
const LISTED_VALUES = 10

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

const textOf = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined)

function describeValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return 'none'
  if (Array.isArray(value)) {
    if (value.length === 0) return 'none'
    const shown = value.slice(0, LISTED_VALUES).map(describeValue).join(', ')
    return value.length > LISTED_VALUES ? `${shown} and ${value.length - LISTED_VALUES} more` : shown
  }
  if (typeof value === 'number') return formatNumber(value)
  if (typeof value === 'string') return value
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  return JSON.stringify(value)
}

const isSiteField = (field: string): field is SiteField => Object.hasOwn(siteFields, field)

/** "block threshold 70 → 60"; a field a later server added goes by its key. */
function describeFieldChange(field: string, from: unknown, to: unknown): string {
  if (field === 'name') return `name “${describeValue(from)}” → “${describeValue(to)}”`
  return labelled(field, `${describeValue(from)} → ${describeValue(to)}`)
}

/** A field's value (or change) after the field's name as the settings page calls it, with its unit. */
function labelled(field: string, text: string): string {
  if (!isSiteField(field)) return `${field} ${text}`
  const { label, unit } = siteFields[field]
  return `${label.charAt(0).toLowerCase()}${label.slice(1)} ${text}${unit === undefined ? '' : ` ${unit}`}`
}

/** The objects of a list in an event's details; anything else there is skipped. */
const recordsOf = (list: unknown): Record<string, unknown>[] => (Array.isArray(list) ? list : []).filter(isRecord)

/** Each { field, from, to } of a list of changes, described; entries of another shape are skipped. */
function describeFieldChanges(list: unknown, describe: (field: string, from: unknown, to: unknown) => string): string[] {
  return recordsOf(list).flatMap((change) => (typeof change.field === 'string' ? [describe(change.field, change.from, change.to)] : []))
}

/** ", 12 times from 3 addresses" for an hour's repeated attempts; nothing for one. */
function repeated(details: Record<string, unknown>): string {
  const count = details.count
  if (typeof count !== 'number' || count <= 1) return ''
  const addresses = Array.isArray(details.addresses) ? details.addresses.length : 0
  const from = addresses > 1 ? ` from ${formatNumber(addresses)}${addresses >= MAX_REPEATED_ADDRESSES ? ' or more' : ''} addresses` : ''
  return `, ${formatNumber(count)} times this hour${from}`
}

/** The secret is never recorded, only whether one was set before and after. */
function describeSecretChange(from: unknown, to: unknown): string {
  if (from !== true) return 'set a webhook secret'
  return to === true ? 'replaced the webhook secret' : 'removed the webhook secret'
}

/**
 * The replaced webhook secret's overlap (previousWebhookSecret: until when it signs, null for no
 * more): its start is told with the replacement, its end on its own, unless the secret went too.
 */
function describePreviousSecretChange(to: unknown, secret: Record<string, unknown> | undefined): { note: string; part?: string } {
  const until = textOf(to)
  if (until !== undefined) return { note: ` (the previous one signs until ${formatDateTime(until)})` }
  return secret?.to === false ? { note: '' } : { note: '', part: 'stopped the previous webhook secret' }
}

function describeSiteUpdate(siteName: string, details: Record<string, unknown>): string {
  const changes = recordsOf(details.changes)
  const secret = changes.find((change) => change.field === 'webhookSecret')
  const previous = changes.find((change) => change.field === 'previousWebhookSecret')
  const values = changes
    .filter((change) => change !== secret && change !== previous && typeof change.field === 'string')
    .map((change) => describeFieldChange(String(change.field), change.from, change.to))
  const { note, part } = previous === undefined ? { note: '' } : describePreviousSecretChange(previous.to, secret)
  const secretChange = secret === undefined ? undefined : describeSecretChange(secret.from, secret.to)
  const secretParts = [...(secretChange === undefined ? [] : [`${secretChange}${note}`]), ...(part === undefined ? [] : [part])]
  if (values.length === 0 && secretParts.length === 1) {
    const only = secretChange ?? part ?? ''
    const sentence = only.charAt(0).toUpperCase() + only.slice(1)
    return `${sentence} ${only.startsWith('set') ? 'for' : 'of'} ${siteName}${secretChange === undefined ? '' : note}`
  }
  const parts = [...values, ...secretParts]
  return parts.length === 0 ? `Changed site ${siteName}` : `Changed site ${siteName}: ${parts.join('; ')}`
}

/** Why a log-in with a known passkey was refused (account.passkey_refused's reason). */
const passkeyRefusals: Record<string, string> = {
  counter: 'its signature counter did not go up: a copy of the authenticator?',
  signature: 'a signature that does not verify',
  user_verification: 'no user verification',
  origin: 'from another site',
  rp_id: 'made for another server',
  user_handle: 'it named another account',
}

/**
 * The distinct details of an hour's repeated attempts (`variants`, the first one's first), or the
 * event's own for one recorded before they were kept.
 */
function variantsOf(details: Record<string, unknown>): Record<string, unknown>[] {
  if (!Array.isArray(details.variants)) return [details]
  const variants = details.variants.filter((variant): variant is Record<string, unknown> => typeof variant === 'object' && variant !== null)
  return variants.length === 0 ? [details] : variants
}

function distinctValues(values: readonly string[]): string[] {
  return [...new Set(values)]
}

/** "a, b and c". */
function listed(values: readonly string[]): string {
  return values.length <= 1 ? (values[0] ?? '') : `${values.slice(0, -1).join(', ')} and ${values.at(-1) ?? ''}`
}

/** "Refused a log-in with passkey Phone (reason; reason)", each passkey refused this hour with its reasons. */
function describePasskeyRefusals(variants: readonly Record<string, unknown>[]): string {
  // By id: two passkeys may have one name.
  const refusals = new Map<string, { name: string; reasons: string[] }>()
  for (const variant of variants) {
    const name = textOf(variant.passkey) ?? ''
    const key = textOf(variant.passkeyId) ?? name
    const reason = passkeyRefusals[textOf(variant.reason) ?? ''] ?? 'the answer did not verify'
    const known = refusals.get(key)
    refusals.set(key, { name, reasons: distinctValues([...(known?.reasons ?? []), reason]) })
  }
  const passkeys = [...refusals.values()].map(({ name, reasons }) => `passkey${name === '' ? '' : ` ${name}`} (${reasons.join('; ')})`)
  return `Refused ${passkeys.length > 1 ? 'log-ins' : 'a log-in'} with ${listed(passkeys)}`
}

/** "(2 other sessions logged out)" for a count of ended sessions, or nothing for none. */
function endedSessions(details: Record<string, unknown>, other: string): string {
  const count = details.endedSessions
  if (typeof count !== 'number' || count <= 0) return ''
  return ` (${formatNumber(count)} ${other}${count === 1 ? 'session' : 'sessions'} logged out)`
}

/** A key's address list in a sentence: up to three entries by name, a longer list by count. */
function addressesLabel(entries: readonly unknown[]): string {
  return entries.length <= 3 ? entries.map(String).join(', ') : `${entries.length} addresses`
}

function describeApiKey(details: Record<string, unknown>): string {
  const name = textOf(details.name) ?? 'without a name'
  const prefix = textOf(details.prefix)
  return prefix === undefined ? name : `${name} (${prefix}…)`
}

/** "sites 2 → all", "addresses any → 203.0.113.0/24", "name ci → deploy", … for an edit's changes: sites by count, as a new key's terms. */
function describeApiKeyChanges(changes: unknown): string[] {
  const sites = (value: unknown) => (Array.isArray(value) ? (value.length === 1 ? '1 site' : `${value.length} sites`) : 'all')
  const expiry = (value: unknown) => (typeof value === 'string' ? formatDateTime(value) : 'never')
  const addresses = (value: unknown) => (Array.isArray(value) ? addressesLabel(value) : 'any')
  return describeFieldChanges(changes, (field, from, to) => {
    if (field === 'siteIds') return `sites ${sites(from)} → ${sites(to)}`
    if (field === 'allowedAddresses') return `addresses ${addresses(from)} → ${addresses(to)}`
    if (field === 'expiresAt') return `expiry ${expiry(from)} → ${expiry(to)}`
    return `${field} ${describeValue(from)} → ${describeValue(to)}`
  })
}

/**
 * ", read only, from 203.0.113.0/24 only, expires Jan 5, 2027, …" for a new key's terms; nothing for full access without an
 * expiry (every key before keys had terms), and an access a later server added by its code.
 */
function describeApiKeyTerms(details: Record<string, unknown>): string {
  const access = textOf(details.access)
  const expiresAt = textOf(details.expiresAt)
  const terms: string[] = []
  if (access === 'read') terms.push('read only')
  else if (access !== undefined && access !== 'full') terms.push(`${access} access`)
  // Its sites by count: the event names their ids only (null, or absent before they existed: all sites).
  if (Array.isArray(details.siteIds)) terms.push(details.siteIds.length === 1 ? 'for 1 site only' : `for ${details.siteIds.length} sites only`)
  if (Array.isArray(details.allowedAddresses)) terms.push(`from ${addressesLabel(details.allowedAddresses)} only`)
  if (expiresAt !== undefined) terms.push(`expires ${formatDateTime(expiresAt)}`)
  return terms.map((term) => `, ${term}`).join('')
}

/**
 * A labeled row as the log shows it: its reference (the start of its id, which the log's search
 * finds), else Siteverify's verification id of older events.
 */
function rowNameOf(details: Record<string, unknown>): string {
  const rowId = textOf(details.rowId)
  return rowId === undefined ? (textOf(details.verificationId) ?? '') : referenceOf(rowId)
}

/**
 * What happened, as a sentence without its final stop: "Changed site Shop: block threshold 70 → 60".
 * A code this dashboard does not know (a later server's) is shown as it is.
 */
export function describeAuditEvent(event: AuditEvent): string {
  const { details } = event
  const siteName = event.site?.name ?? 'a site'
  switch (event.action) {
    case 'account.created':
      return event.actor.type === 'anonymous' ? 'Signed up' : 'Created the account'
    case 'account.logged_in': {
      const passkey = textOf(details.passkey)
      return passkey === undefined ? 'Logged in' : `Logged in with passkey ${passkey}`
    }
    case 'account.login_failed':
      return `Failed log-in (wrong password)${repeated(details)}`
    case 'account.logged_out':
      return 'Logged out'
    case 'account.password_check_failed':
      return `Gave a wrong current password to change the password or delete the account${repeated(details)}`
    case 'account.password_changed':
      return `Changed the password${endedSessions(details, 'other ')}`
    case 'account.password_set':
      return `Set a new password${endedSessions(details, '')}`
    case 'account.disabled':
      return `The server's operator disabled the account${endedSessions(details, '')}`
    case 'account.enabled':
      return "The server's operator enabled the account again"
    case 'account.sessions_ended':
      return `The server's operator logged the account out everywhere${endedSessions(details, '')}`
    case 'account.two_factor_enabled':
      return 'Turned on two-factor authentication'
    case 'account.two_factor_disabled':
      // The operator's `npm run account -- disable-two-factor`, for an owner who lost the app and the codes.
      return event.actor.type === 'operator' ? "The server's operator turned off two-factor authentication" : 'Turned off two-factor authentication'
    case 'account.two_factor_asked':
      // The first step of a log-in from a browser that has not passed the second factor: the owner on a new browser, or someone who has the password.
      return `Gave the right password from a browser that has not passed two-factor, and was asked for the code${repeated(details)}`
    case 'account.two_factor_failed':
      // At a log-in, or when turning two-factor off or making new recovery codes.
      return `Gave the right password but a wrong two-factor code${repeated(details)}`
    case 'account.recovery_code_used': {
      const left = details.recoveryCodesLeft
      return typeof left === 'number' ? `Used a recovery code (${left === 0 ? 'none' : formatNumber(left)} left)` : 'Used a recovery code'
    }
    case 'account.recovery_codes_regenerated':
      return 'Made new recovery codes (the old ones stopped working)'
    case 'account.passkey_added':
      return `Added passkey ${textOf(details.name) ?? ''}`.trimEnd()
    case 'account.passkey_renamed':
      return `Renamed passkey ${textOf(details.from) ?? ''} to ${textOf(details.to) ?? ''}`
    case 'account.passkey_removed':
      return `Removed passkey ${textOf(details.name) ?? ''}`.trimEnd() + endedSessions(details, '')
    case 'account.passkey_refused':
      return describePasskeyRefusals(variantsOf(details)) + repeated(details)
    case 'session.ended':
      return event.actor.id !== null && details.sessionId === event.actor.id ? 'Logged out this session' : 'Logged out another session'
    case 'sessions.ended_others':
      return `Logged out everywhere else${endedSessions(details, 'other ')}`
    case 'api_key.address_refused': {
      // The key is the event's actor: the latest one refused this hour. Others refused in the hour are named.
      const keys = distinctValues(variantsOf(details).map(describeApiKey))
      if (keys.length > 1) return `Refused API keys ${listed(keys)}: the requests came from addresses their allowed addresses do not hold${repeated(details)}`
      return `Refused the API key: the request came from an address its allowed addresses do not hold${repeated(details)}`
    }
    case 'api_key.created':
      return `Created API key ${describeApiKey(details)}${describeApiKeyTerms(details)}`
    case 'api_key.updated':
      return `Changed API key ${describeApiKey(details)}: ${describeApiKeyChanges(details.changes).join('; ')}`
    case 'api_key.revoked':
      return `Revoked API key ${describeApiKey(details)}`
    case 'site.created': {
      const domains = Array.isArray(details.domains) && details.domains.length > 0 ? ` for ${describeValue(details.domains)}` : ''
      const settings = describeFieldChanges(details.settings, (field, from, to) => (field === 'webhookSecret' ? 'a webhook secret' : labelled(field, describeValue(to))))
      return `Created site ${siteName}${domains}${settings.length === 0 ? '' : ` with ${settings.join('; ')}`}`
    }
    case 'site.updated':
      return describeSiteUpdate(siteName, details)
    case 'site.deleted':
      return `Deleted site ${siteName}`
    case 'site.secret_rotated': {
      const until = textOf(details.previousSecretExpiresAt)
      return `Rotated the secret key of ${siteName} (${until === undefined ? 'the old key stopped at once' : `the old key valid until ${formatDateTime(until)}`})`
    }
    case 'site.previous_secrets_ended':
      return `Stopped the previous secret keys of ${siteName}`
    case 'site.invitation_created': {
      const email = textOf(details.email)
      return `Invited ${email ?? 'anyone with the link'} to ${siteName} as ${textOf(details.role) ?? 'a member'}`
    }
    case 'site.invitation_revoked': {
      const revoked = `Revoked the invitation of ${textOf(details.email) ?? 'anyone with the link'} to ${siteName}`
      const inviter = textOf(details.invitedBy) ?? 'its inviter'
      const why = { member_removed: `${inviter} was removed`, member_left: `${inviter} left`, made_viewer: `${inviter} was made a viewer`, inviter_disabled: `${inviter} was disabled` }[textOf(details.reason) ?? '']
      return why === undefined ? revoked : `${revoked} (${why})`
    }
    case 'site.member_joined':
      return `${textOf(details.email) ?? 'An account'} joined ${siteName} as ${textOf(details.role) ?? 'a member'}`
    case 'site.member_role_changed':
      return `Made ${textOf(details.email) ?? 'a member'} ${textOf(details.to) ?? 'another role'} of ${siteName} (was ${textOf(details.from) ?? 'unknown'})`
    case 'site.member_removed':
      return `Removed ${textOf(details.email) ?? 'a member'} from ${siteName}`
    case 'site.member_left':
      return `${textOf(details.email) ?? 'A member'} left ${siteName}`
    case 'site.ownership_transferred': {
      const previousOwner = textOf(details.previousOwnerEmail)
      return `Made ${textOf(details.email) ?? 'a member'} the owner of ${siteName}${previousOwner === undefined ? '' : ` (${previousOwner} became an admin)`}`
    }
    case 'verification.labeled': {
      const reason = textOf(details.reason)
      const label = textOf(details.label)
      const labelName = label !== undefined && isVerificationLabel(label) ? labelNames[label].toLowerCase() : (label ?? '')
      const reasonName = reason === undefined ? undefined : isLabelReason(reason) ? reasonNames[reason] : reason
      return `Labeled verification ${rowNameOf(details)} of ${siteName} ${labelName}${reasonName === undefined ? '' : ` (${reasonName})`}`
    }
    case 'verification.label_removed':
      return `Removed the label of verification ${rowNameOf(details)} of ${siteName}`
    case 'verifications.deleted': {
      const filters = Array.isArray(details.filters) ? details.filters.filter((filter): filter is string => typeof filter === 'string') : []
      const by = filters.map((filter) => (filter === 'clientIp' ? 'address' : filter)).join(' and ')
      const count = typeof details.count === 'number' ? details.count : undefined
      const rows = count === undefined ? 'the verifications' : `${count} verification${count === 1 ? '' : 's'}`
      return `Deleted ${rows} of a visitor${by === '' ? '' : ` (by ${by})`} from the log of ${siteName}`
    }
    default:
      return event.site === null ? `Other event: ${event.action}` : `Other event: ${event.action} (site ${siteName})`
  }
}

/**
 * Who made the change: "you@example.com (dashboard)", "alice@example.com via API key deploy
 * (tgak_abcdefg…)" (a key's name is its member's choice: the account says whose it is), or
 * "API key deploy (tgak_abcdefg…)" for events written before keys named their account.
 */
export function describeActor(actor: AuditActor): string {
  switch (actor.type) {
    case 'session':
      return `${actor.name ?? 'A logged-in user'} (dashboard)`
    case 'api-key': {
      const name = actor.name ?? 'without a name'
      const key = actor.keyPrefix === null ? `API key ${name}` : `API key ${name} (${actor.keyPrefix}…)`
      return actor.email === undefined || actor.email === null ? key : `${actor.email} via ${key}`
    }
    case 'operator':
      return 'Server operator'
    case 'anonymous':
      return 'Unknown (not logged in)'
    default:
      return `Unknown (${actor.type})`
  }
}

/** Where from: the address and the browser, as the account's sessions list describes it. */
export function describeOrigin(actor: AuditActor): { address: string; browser: string | undefined } {
  if (actor.type === 'operator') return { address: 'The server itself', browser: undefined }
  return { address: actor.clientIp ?? 'Unknown address', browser: actor.userAgent === null ? undefined : describeUserAgent(actor.userAgent) }
}
