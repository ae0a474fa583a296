import { isAddressListed, normalizeAddressEntry, normalizeAddressList, type AddressListRules } from './address-list.js'
import type { FieldIssue } from './site-input.js'

/** Entries of a site's address allowlist at most (reCAPTCHA's allowlist takes as many). */
export const MAX_ALLOWED_ADDRESSES = 1_000

/**
 * An entry wider than /8 (IPv4) or /24 (IPv6) would let a large part of the internet past the
 * risk model, which is a typing mistake (0.0.0.0/0) rather than a wish.
 */
const allowlistRules: AddressListRules = {
  field: 'settings.allowedAddresses',
  maxEntries: MAX_ALLOWED_ADDRESSES,
  widestPrefix: { ipv4: 8, ipv6: 24 },
  consequence: 'would let a large part of the internet through',
}

/** An allowlist entry in its canonical form (normalizeAddressEntry), or the problem with it. */
export function normalizeAllowedAddress(entry: string): { address: string } | { problem: string } {
  return normalizeAddressEntry(entry, allowlistRules)
}

/** An allowlist normalized and deduplicated, or the issues that prevent it (fields `settings.allowedAddresses.<index>`). */
export function normalizeAllowedAddresses(entries: readonly string[]): { addresses: string[]; issues: FieldIssue[] } {
  return normalizeAddressList(entries, allowlistRules)
}

/** Whether the client's address is on the site's allowlist (normalized entries, as stored). Free for the sites without one. */
export function isAddressAllowed(addresses: readonly string[], clientIp: string): boolean {
  return isAddressListed(addresses, clientIp)
}
