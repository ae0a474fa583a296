import { BlockList, isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import type { FieldIssue } from './site-input.js'

/**
 * A site's list of addresses and ranges (its allowlist, its blocklist): what an entry may be, its
 * canonical form, and the matcher a client address is checked with.
 */
export interface AddressListRules {
  /** The setting's name, for the issues' fields (`settings.<name>.<index>`). */
  setting: string
  maxEntries: number
  /**
   * The widest ranges the list takes: an entry wider is a typing mistake (0.0.0.0/0) rather than a
   * wish. `consequence` ends the refusal's sentence ("which would let ... through").
   */
  widestPrefix: { ipv4: number; ipv6: number }
  consequence: string
}

/**
 * An entry in its canonical form: an address as the URL parser writes it (IPv6 compressed, an
 * IPv4-mapped IPv6 address as IPv4), or a range as network/prefix with the host bits cleared
 * (203.0.113.7/24 is 203.0.113.0/24); or the problem with it.
 */
export function normalizeAddressEntry(entry: string, rules: Pick<AddressListRules, 'widestPrefix' | 'consequence'>): { address: string } | { problem: string } {
  const text = entry.trim()
  const [base = '', prefixText, ...rest] = text.split('/')
  if (rest.length > 0 || base.includes('%') || isIP(base) === 0) {
    return { problem: `must be an IPv4 or IPv6 address or a range such as 203.0.113.0/24 or 2001:db8::/48 (got ${JSON.stringify(entry.slice(0, 100))})` }
  }
  let address = ipaddr.parse(base)
  let prefix = prefixText === undefined ? undefined : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address()
    if (prefix !== undefined) prefix -= 96
  }
  const kind = address.kind()
  const bits = kind === 'ipv4' ? 32 : 128
  if (prefix === undefined || prefix === bits) return { address: address.toString() }
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) return { problem: `has a prefix length that is not 0 to ${bits} (got ${JSON.stringify(entry.slice(0, 100))})` }
  const widest = rules.widestPrefix[kind]
  if (prefix < widest) return { problem: `is wider than /${widest}, which ${rules.consequence} (got ${JSON.stringify(entry.slice(0, 100))})` }
  const network = kind === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefix}`) : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
  return { address: `${network.toString()}/${prefix}` }
}

/** A list normalized and deduplicated, or the issues that prevent it (fields `settings.<setting>.<index>`). */
export function normalizeAddressList(entries: readonly string[], rules: AddressListRules): { addresses: string[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = []
  const addresses: string[] = []
  const field = `settings.${rules.setting}`
  if (entries.length > rules.maxEntries) issues.push({ field, message: `must list at most ${rules.maxEntries} addresses or ranges` })
  entries.forEach((entry, index) => {
    const normalized = normalizeAddressEntry(entry, rules)
    if ('problem' in normalized) issues.push({ field: `${field}.${index}`, message: normalized.problem })
    else if (!addresses.includes(normalized.address)) addresses.push(normalized.address)
  })
  return { addresses, issues }
}

/** The lists in use, as node's BlockList, by the site settings' array (a site's settings are replaced, never changed in place). */
const compiled = new WeakMap<readonly string[], BlockList>()

function compile(addresses: readonly string[]): BlockList {
  const list = new BlockList()
  for (const entry of addresses) {
    const [address = '', prefix] = entry.split('/')
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6'
    if (prefix === undefined) list.addAddress(address, family)
    else list.addSubnet(address, Number(prefix), family)
  }
  return list
}

/**
 * Whether the client's address is on a list (normalized entries, as stored). Free for an empty
 * list; otherwise the list is compiled once per settings array, as the site cache holds it.
 */
export function isAddressListed(addresses: readonly string[], clientIp: string): boolean {
  if (addresses.length === 0) return false
  const family = isIP(clientIp)
  if (family === 0) return false
  let list = compiled.get(addresses)
  if (list === undefined) {
    list = compile(addresses)
    compiled.set(addresses, list)
  }
  return list.check(clientIp, family === 4 ? 'ipv4' : 'ipv6')
}
