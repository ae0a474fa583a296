import { isAddressListed, isRangeCovered, normalizeAddressList, type AddressListRules } from '../sites/address-list.js'
import type { FieldIssue } from '../sites/site-input.js'

/** Entries of an API key's address list at most: a deployment's runners, an office, a VPN's exits. */
export const MAX_API_KEY_ADDRESSES = 100

/**
 * A key's list takes the ranges one network holds (a provider's /10, a carrier's /19 of IPv6), as
 * a site's blocklist does. Wider (0.0.0.0/0) would leave the key usable from most of the internet
 * while it looks restricted: no list (null) says that plainly.
 */
const apiKeyAddressRules: AddressListRules = {
  field: 'allowedAddresses',
  maxEntries: MAX_API_KEY_ADDRESSES,
  widestPrefix: { ipv4: 8, ipv6: 16 },
  consequence: 'would let a large part of the internet use the key (leave the list out, or null, for any address)',
}

/** A key's list normalized and deduplicated, or the issues that prevent it (fields `allowedAddresses.<index>`). */
export function normalizeApiKeyAddresses(entries: readonly string[]): { addresses: string[]; issues: FieldIssue[] } {
  return normalizeAddressList(entries, apiKeyAddressRules)
}

/** Whether a key with this list (null: any address) may be used by a request from `clientIp`. */
export function isApiKeyUsableFrom(allowedAddresses: readonly string[] | null, clientIp: string): boolean {
  return allowedAddresses === null || isAddressListed(allowedAddresses, clientIp)
}

/**
 * Whether `next` lets a key be used from an address `current` does not: any address where it had
 * a list, or an entry that no entry of the current list holds. A narrower list, or the same one in
 * another order, does not widen it.
 */
export function widensAddressList(current: readonly string[] | null, next: readonly string[] | null): boolean {
  if (current === null) return false
  return next === null || next.some((entry) => !isRangeCovered(entry, current))
}
