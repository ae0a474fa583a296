import type { ApiKeyAccess } from '../api/types.js'
import { parseListEntries } from './snippet.js'

/** Each access as the API keys page offers it, with what a key of it may do. */
export const accessChoices: readonly { access: ApiKeyAccess; label: string; hint: string }[] = [
  { access: 'full', label: 'Full access', hint: 'Can create, change and delete sites, their settings and webhooks, and rotate their secret keys.' },
  { access: 'read', label: 'Read only', hint: 'Can read analytics, logs and settings (GET requests only); anything else is refused.' },
]

export function accessLabel(access: ApiKeyAccess): string {
  return accessChoices.find((choice) => choice.access === access)?.label ?? access
}

const DAY_MS = 24 * 60 * 60 * 1000

/** The expiries the API keys page offers, in days from the creation; null for never. */
export const expiryChoices = [
  { value: '7d', label: 'In 7 days', days: 7 },
  { value: '30d', label: 'In 30 days', days: 30 },
  { value: '90d', label: 'In 90 days', days: 90 },
  { value: '1y', label: 'In 1 year', days: 365 },
  { value: 'never', label: 'Never', days: null },
] as const

export type ExpiryChoice = (typeof expiryChoices)[number]['value']

/**
 * Never, as before keys could expire: nothing tells the owner of a key about to expire (no e-mail,
 * no warning), and a deploy script whose key lapsed unseen fails with a 401. A shorter one is a
 * choice made for a key, in view of what uses it.
 */
export const DEFAULT_EXPIRY: ExpiryChoice = 'never'

/** The expiresAt the API takes for a choice made at `now`: an ISO 8601 time, or null for never. */
export function expiresAtOf(choice: ExpiryChoice, now: Date): string | null {
  const days = expiryChoices.find((option) => option.value === choice)?.days ?? null
  return days === null ? null : new Date(now.getTime() + days * DAY_MS).toISOString()
}

/** Which sites a new key is for: all of the account's (the default), or some chosen ones. */
export type SiteScope = 'all' | 'some'

/** The siteIds the API takes: null for all sites, else the chosen ones (in the account's order of them). */
export function siteIdsOf(scope: SiteScope, chosen: ReadonlySet<string>, sites: readonly { id: string }[]): string[] | null {
  return scope === 'all' ? null : sites.filter((site) => chosen.has(site.id)).map((site) => site.id)
}

/** A key's access and sites as the edit form holds them. */
export interface KeyTermsChoice {
  access: ApiKeyAccess
  scope: SiteScope
  chosen: ReadonlySet<string>
}

/**
 * The access and siteIds an edit sends: those the operator changed only. A rename then leaves the
 * key's list as it is, with the sites the account no longer reaches (which the form cannot show,
 * so would drop), and needs no site list loaded. A changed list is sent as the form shows it.
 */
export function changedTermsOf(
  key: { access: ApiKeyAccess; siteIds: readonly string[] | null },
  choice: KeyTermsChoice,
  sites: readonly { id: string }[],
): { access?: ApiKeyAccess; siteIds?: string[] | null } {
  const access = choice.access === key.access ? {} : { access: choice.access }
  const sameSites =
    key.siteIds === null ? choice.scope === 'all' : choice.scope === 'some' && choice.chosen.size === new Set(key.siteIds).size && key.siteIds.every((id) => choice.chosen.has(id))
  return sameSites ? access : { ...access, siteIds: siteIdsOf(choice.scope, choice.chosen, sites) }
}

/**
 * The sites a listed key reaches, by name: "All sites", or the names of its sites that the account
 * still reaches (in its list's order), and how many it names that the account no longer reaches
 * (left, or deleted), which the key no longer reaches either.
 */
export function keySitesLabel(siteIds: readonly string[] | null, sites: readonly { id: string; name: string }[]): string {
  if (siteIds === null) return 'All sites'
  const names = new Map(sites.map((site) => [site.id, site.name]))
  const known = siteIds.flatMap((id) => names.get(id) ?? [])
  const gone = siteIds.length - known.length
  const goneLabel = gone === 0 ? [] : [gone === 1 ? '1 site no longer yours' : `${gone} sites no longer yours`]
  return [...known, ...goneLabel].join(', ')
}

/** The allowedAddresses the API takes from the form's text: its entries (one per line, or separated by spaces or commas), or null for any address when it is empty. */
export function allowedAddressesOf(text: string): string[] | null {
  const entries = parseListEntries(text)
  return entries.length === 0 ? null : entries
}

/** A key's list as the form's text shows it: one entry per line, empty for any address. */
export function allowedAddressesText(allowedAddresses: readonly string[] | null): string {
  return allowedAddresses?.join('\n') ?? ''
}

/**
 * The allowedAddresses an edit sends: none when the text still lists the key's entries (a rename
 * sends no list); else the list as typed, which the service normalizes, or null for any address.
 */
export function changedAddressesOf(key: { allowedAddresses: readonly string[] | null }, text: string): { allowedAddresses?: string[] | null } {
  const typed = allowedAddressesOf(text)
  const same = typed === null ? key.allowedAddresses === null : key.allowedAddresses !== null && typed.join('\n') === key.allowedAddresses.join('\n')
  return same ? {} : { allowedAddresses: typed }
}

/** The addresses a listed key may be used from: "Any", up to three entries, or two and how many more. */
export function keyAddressesLabel(allowedAddresses: readonly string[] | null): string {
  if (allowedAddresses === null) return 'Any'
  if (allowedAddresses.length <= 3) return allowedAddresses.join(', ')
  return `${allowedAddresses.slice(0, 2).join(', ')} and ${allowedAddresses.length - 2} more`
}
