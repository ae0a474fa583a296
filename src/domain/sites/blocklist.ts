import { COUNTRY_CODES, UNKNOWN_COUNTRY_CODE } from '../network/country-codes.js'
import type { AnomalyLabel } from '../risk/anomalies.js'
import { isAddressListed, normalizeAddressList, type AddressListRules } from './address-list.js'
import type { FieldIssue } from './site-input.js'
import type { SiteSettings } from './site.js'

/** Entries of a site's address blocklist at most: as many as its allowlist takes. */
export const MAX_BLOCKED_ADDRESSES = 1_000

/** Every code the IP data can answer may be blocked, each once: the list can hold no more. */
export const MAX_BLOCKED_COUNTRIES = COUNTRY_CODES.size

/**
 * The blocklist takes the ranges a single network holds (a hosting provider's /10 of IPv4, a
 * carrier's /19 of IPv6), wider than the allowlist's /24 of IPv6: a block is seen at once by the
 * people it turns away and undone by the operator, a trust is not. Wider still (0.0.0.0/0, 2000::/3)
 * is a typing mistake or a whole region, which blockedCountries says better.
 */
const blocklistRules: AddressListRules = {
  field: 'settings.blockedAddresses',
  maxEntries: MAX_BLOCKED_ADDRESSES,
  widestPrefix: { ipv4: 8, ipv6: 16 },
  consequence: 'would turn away a large part of the internet',
}

/** A blocklist normalized and deduplicated, or the issues that prevent it (fields `settings.blockedAddresses.<index>`). */
export function normalizeBlockedAddresses(entries: readonly string[]): { addresses: string[]; issues: FieldIssue[] } {
  return normalizeAddressList(entries, blocklistRules)
}

/**
 * Blocked countries uppercased, deduplicated and sorted, or the issues that prevent it (fields
 * `settings.blockedCountries.<index>`). XX, the code of addresses the data does not place, is
 * refused: it would turn away private and loopback addresses (every visitor, behind a proxy that
 * TRUST_PROXY does not name) and whatever the data misses, not a country.
 */
export function normalizeBlockedCountries(entries: readonly string[]): { countries: string[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = []
  const countries = new Set<string>()
  // No count is checked: the codes are counted once each, and there are MAX_BLOCKED_COUNTRIES of
  // them (the schema bounds what is read).
  entries.forEach((entry, index) => {
    const text = entry.trim()
    // Two ASCII letters before upper-casing: 'ß'.toUpperCase() is 'SS' (South Sudan), and other
    // letters fold into ASCII codes too.
    const code = /^[A-Za-z]{2}$/.test(text) ? text.toUpperCase() : ''
    const got = `(got ${JSON.stringify(entry.slice(0, 100))})`
    if (code === UNKNOWN_COUNTRY_CODE) {
      issues.push({ field: `settings.blockedCountries.${index}`, message: `cannot be XX, which stands for addresses of no known country (private ones among them), not a country ${got}` })
    } else if (COUNTRY_CODES.has(code)) {
      countries.add(code)
    } else {
      issues.push({ field: `settings.blockedCountries.${index}`, message: `must be a two-letter ISO 3166-1 country code such as DE or US ${got}` })
    }
  })
  return { countries: [...countries].sort(), issues }
}

/** The blocked countries in use, as a Set, by the site settings' array (replaced, never changed in place). */
const countrySets = new WeakMap<readonly string[], ReadonlySet<string>>()

/** Whether the country is on the site's list (a Set per settings array). */
function isCountryBlocked(countries: readonly string[], countryCode: string): boolean {
  if (countries.length === 0) return false
  let set = countrySets.get(countries)
  if (set === undefined) {
    set = new Set(countries)
    countrySets.set(countries, set)
  }
  return set.has(countryCode)
}

type Blocklist = Pick<SiteSettings, 'blockedAddresses' | 'blockedCountries'>

/** Whether the site blocks anything: the one check the sites without a blocklist pay. */
export function hasBlocklist(settings: Blocklist): boolean {
  return settings.blockedAddresses.length + settings.blockedCountries.length > 0
}

/**
 * The labels that turn the client away: address_blocked for an address on the site's blocklist,
 * country_blocked for an address of a blocked country; none when neither holds. The allowlist is
 * the caller's to check first: it wins.
 */
export function findBlocklistLabels(settings: Blocklist, clientIp: string, countryCode: string): AnomalyLabel[] {
  const labels: AnomalyLabel[] = []
  if (isAddressListed(settings.blockedAddresses, clientIp)) labels.push('address_blocked')
  if (isCountryBlocked(settings.blockedCountries, countryCode)) labels.push('country_blocked')
  return labels
}

/**
 * Whether the site turns the client away, for a caller that needs no labels (the gate): the
 * address list first, and the country looked up only when the address is not listed and the site
 * blocks countries.
 */
export async function isBlocklisted(settings: Blocklist, clientIp: string, countryOf: (clientIp: string) => Promise<string>): Promise<boolean> {
  if (isAddressListed(settings.blockedAddresses, clientIp)) return true
  return settings.blockedCountries.length > 0 && isCountryBlocked(settings.blockedCountries, await countryOf(clientIp))
}
