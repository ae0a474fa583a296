import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { parseDottedQuad } from '../network/ip-address.js'
import { searchLastStart } from '../search-last-start.js'
import type { FieldIssue } from './site-input.js'

/**
 * A list of addresses and ranges (a site's allowlist and blocklist, an API key's addresses): what
 * an entry may be, its canonical form, and the matcher a client address is checked with.
 */
export interface AddressListRules {
  /** The list's field, as the issues name it (`<field>.<index>`): `settings.allowedAddresses`, say. */
  field: string
  maxEntries: number
  /**
   * The widest ranges the list takes: an entry wider is a typing mistake (0.0.0.0/0) rather than a
   * wish. `consequence` ends the refusal's sentence ("which would let ... through").
   */
  widestPrefix: { ipv4: number; ipv6: number }
  consequence: string
}

/** Where IPv6 carries IPv4 addresses (::ffff:a.b.c.d). */
const ipv4MappedRange = ipaddr.IPv6.parse('::ffff:0:0')

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
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && (prefix === undefined || prefix >= 96)) {
    address = (address as ipaddr.IPv6).toIPv4Address()
    if (prefix !== undefined) prefix -= 96
  }
  const kind = address.kind()
  const bits = kind === 'ipv4' ? 32 : 128
  const got = `(got ${JSON.stringify(entry.slice(0, 100))})`
  if (prefix === undefined || prefix === bits) return { address: address.toString() }
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) return { problem: `has a prefix length that is not 0 to ${bits} ${got}` }
  const widest = rules.widestPrefix[kind]
  if (prefix < widest) return { problem: `is wider than /${widest}, which ${rules.consequence} ${got}` }
  // IPv4 clients (and IPv4-mapped ones, which are their IPv4 address) are matched against the
  // IPv4 entries only. An IPv6 range around ::ffff:0:0/96 would read as every IPv4 address to a
  // matcher that maps IPv4 into IPv6 (node's BlockList did: ::/24 allowed all of IPv4), and as no
  // IPv4 address to this one: either way not what it says, so it is refused.
  if (kind === 'ipv6' && prefix <= 96 && ipv4MappedRange.match(address, prefix)) {
    return { problem: `contains the IPv4-mapped range ::ffff:0:0/96, which matches no IPv4 client: IPv4 clients are matched against IPv4 entries only, so list IPv4 ranges for them ${got}` }
  }
  const network = kind === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefix}`) : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
  return { address: `${network.toString()}/${prefix}` }
}

/**
 * A list normalized and deduplicated, or the issues that prevent it (fields `<rules.field>.<index>`).
 * At most rules.maxEntries distinct entries (counted after deduplication); past that it stops.
 */
export function normalizeAddressList(entries: readonly string[], rules: AddressListRules): { addresses: string[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = []
  const addresses = new Set<string>()
  const { field } = rules
  for (const [index, entry] of entries.entries()) {
    const normalized = normalizeAddressEntry(entry, rules)
    if ('problem' in normalized) {
      issues.push({ field: `${field}.${index}`, message: normalized.problem })
    } else if (!addresses.has(normalized.address)) {
      // The cap counts distinct entries, as stored: a pasted list with repeats is not refused for them.
      if (addresses.size === rules.maxEntries) {
        issues.push({ field, message: `must list at most ${rules.maxEntries} distinct addresses or ranges` })
        break
      }
      addresses.add(normalized.address)
    }
  }
  return { addresses: [...addresses], issues }
}

/**
 * A list compiled for matching: per family, its entries as ranges of keys sorted by their first
 * key and merged where they nest, so that a lookup is one binary search (O(log n)). An IPv4 key is
 * the address as a number; an IPv6 key is a string of its eight 16-bit groups, one UTF-16 code
 * unit each, since strings compare by code units. Node's BlockList tries every rule in turn and
 * costs microseconds even for one: too slow for a list of a thousand on the public routes.
 */
interface Ranges<Key extends number | string> {
  starts: Key[]
  ends: Key[]
}

interface CompiledList {
  ipv4: Ranges<number>
  ipv6: Ranges<string>
}

const compiled = new WeakMap<readonly string[], CompiledList>()

/** The bits of byte `index` that a prefix of `prefix` bits covers. */
function maskByte(prefix: number, index: number): number {
  const covered = Math.min(8, Math.max(0, prefix - index * 8))
  return (0xff << (8 - covered)) & 0xff
}

function ipv4KeyOfBytes(bytes: readonly number[]): number {
  return bytes.reduce((key, byte) => key * 256 + byte, 0)
}

function ipv6KeyOfBytes(bytes: readonly number[]): string {
  let key = ''
  for (let index = 0; index < bytes.length; index += 2) key += String.fromCharCode(((bytes[index] ?? 0) << 8) | (bytes[index + 1] ?? 0))
  return key
}

/** Sorts ranges by their start and merges the nested ones (ranges of prefixes either nest or are apart). */
function mergeRanges<Key extends number | string>(ranges: [Key, Key][]): Ranges<Key> {
  ranges.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const merged: Ranges<Key> = { starts: [], ends: [] }
  for (const [first, last] of ranges) {
    const previous = merged.ends[merged.ends.length - 1]
    if (previous !== undefined && first <= previous) {
      if (last > previous) merged.ends[merged.ends.length - 1] = last
      continue
    }
    merged.starts.push(first)
    merged.ends.push(last)
  }
  return merged
}

function compile(addresses: readonly string[]): CompiledList {
  const ipv4: [number, number][] = []
  const ipv6: [string, string][] = []
  for (const entry of addresses) {
    const [text = '', prefixText] = entry.split('/')
    const bytes = ipaddr.parse(text).toByteArray()
    const prefix = prefixText === undefined ? bytes.length * 8 : Number(prefixText)
    const first = bytes.map((byte, index) => byte & maskByte(prefix, index))
    const last = bytes.map((byte, index) => (byte | ~maskByte(prefix, index)) & 0xff)
    if (bytes.length === 4) ipv4.push([ipv4KeyOfBytes(first), ipv4KeyOfBytes(last)])
    else ipv6.push([ipv6KeyOfBytes(first), ipv6KeyOfBytes(last)])
  }
  return { ipv4: mergeRanges(ipv4), ipv6: mergeRanges(ipv6) }
}

/** Whether a range holds the key: the last range that starts at or before it is the only one that can. */
function isInRanges<Key extends number | string>({ starts, ends }: Ranges<Key>, key: Key): boolean {
  const found = searchLastStart(starts, key)
  return found >= 0 && key <= (ends[found] as Key)
}

/** How a dual-stack listener writes an IPv4 peer's address, before its dotted quad. */
const IPV4_MAPPED_PREFIX = '::ffff:'

/** The eight 16-bit groups of an IPv6 address's text that isIP has accepted (a zone is ignored). */
function ipv6Groups(text: string): number[] {
  const zone = text.indexOf('%')
  const bare = zone === -1 ? text : text.slice(0, zone)
  const groupsOf = (part: string): number[] => {
    if (part === '') return []
    const groups: number[] = []
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const key = parseDottedQuad(piece) ?? 0
        groups.push(Math.floor(key / 65_536), key % 65_536)
      } else {
        groups.push(Number.parseInt(piece, 16))
      }
    }
    return groups
  }
  const gap = bare.indexOf('::')
  const head = groupsOf(gap === -1 ? bare : bare.slice(0, gap))
  const tail = gap === -1 ? [] : groupsOf(bare.slice(gap + 2))
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail]
}

/**
 * Whether the client's address is on a list (normalized entries, as stored); an IPv4-mapped IPv6
 * address is its IPv4 address. Free for an empty list; otherwise the list is compiled once per
 * settings array (a site's settings are replaced, never changed in place: the site cache's copy
 * keeps its compiled list until it is reloaded), and matched by a binary search.
 */
export function isAddressListed(addresses: readonly string[], clientIp: string): boolean {
  if (addresses.length === 0) return false
  let list = compiled.get(addresses)
  if (list === undefined) {
    list = compile(addresses)
    compiled.set(addresses, list)
  }
  // Dotted IPv4, and the form a dual-stack listener reports IPv4 peers in, are read by hand in
  // one pass, as they are most clients: node's isIP and the IPv6 reading cost more than the search.
  const ipv4 = parseDottedQuad(clientIp, clientIp.startsWith(IPV4_MAPPED_PREFIX) ? IPV4_MAPPED_PREFIX.length : 0)
  if (ipv4 !== undefined) return isInRanges(list.ipv4, ipv4)
  if (isIP(clientIp) !== 6) return false
  const groups = ipv6Groups(clientIp)
  const isIpv4Mapped = groups[5] === 0xffff && groups.slice(0, 5).every((group) => group === 0)
  if (isIpv4Mapped) return isInRanges(list.ipv4, (groups[6] ?? 0) * 65_536 + (groups[7] ?? 0))
  return isInRanges(list.ipv6, String.fromCharCode(...groups))
}

/** An entry in its canonical form as an address and a prefix length (an address alone: all its bits). */
function rangeOf(entry: string): { network: ipaddr.IPv4 | ipaddr.IPv6; prefix: number } {
  const [text = '', prefixText] = entry.split('/')
  const network = ipaddr.parse(text)
  return { network, prefix: prefixText === undefined ? (network.kind() === 'ipv4' ? 32 : 128) : Number(prefixText) }
}

/**
 * Whether every address of `entry` is within one entry of `list` (canonical entries, as stored):
 * an address or a range inside a listed range, or a listed entry itself. An entry that only the
 * union of several listed ranges covers counts as not covered, which errs on the side of asking.
 */
export function isRangeCovered(entry: string, list: readonly string[]): boolean {
  const { network, prefix } = rangeOf(entry)
  return list.some((other) => {
    const listed = rangeOf(other)
    return listed.network.kind() === network.kind() && listed.prefix <= prefix && network.match(listed.network, listed.prefix)
  })
}
