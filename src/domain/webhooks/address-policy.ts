import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * Which IP addresses a webhook may connect to when private webhooks are not allowed.
 *
 * Deny by default: only addresses that ipaddr.js classifies as global `unicast` pass. Everything
 * else is refused: loopback, RFC 1918 private, link-local (which holds the cloud metadata service
 * 169.254.169.254), carrier-grade NAT, unique-local (AWS's fd00:ec2::254), multicast, unspecified,
 * broadcast, reserved and documentation ranges, and the IPv6 transition prefixes (6to4, Teredo,
 * NAT64) that can smuggle an internal IPv4 address. An IPv4-mapped IPv6 address
 * (::ffff:127.0.0.1), or an IPv4-compatible one (::127.0.0.1), is judged as the IPv4 address it carries.
 *
 * With private webhooks allowed (WEBHOOK_ALLOW_PRIVATE, development and tests), loopback and LAN
 * receivers pass, but link-local addresses and the cloud metadata services still do not: no
 * webhook receiver lives there, and a server in the cloud answers its credentials there to
 * anyone who can make it send a request (anyone who can sign up, in development).
 */

/** AWS, GCP and Azure (169.254.169.254), AWS over IPv6, Alibaba Cloud (in the CGNAT range). */
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200'])

export interface AddressPolicy {
  /** Loopback, private and other non-public ranges pass, except link-local and metadata addresses. */
  allowPrivate?: boolean
}

/** The name of the range that makes `address` refused, or undefined when the policy lets it through. */
export function findRefusedRange(address: string, policy: AddressPolicy = {}): string | undefined {
  const literal = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  // Only canonical literals (as DNS answers and URL parsing produce); `1.2.3`-style forms are refused.
  if (isIP(literal) === 0) return 'invalid'
  let parsed = ipaddr.parse(literal)
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  } else if (parsed.kind() === 'ipv6' && isIPv4Compatible(parsed as ipaddr.IPv6)) {
    // The deprecated ::a.b.c.d form (::/96): judged as the IPv4 address it carries, as the mapped form is.
    parsed = ipaddr.fromByteArray((parsed as ipaddr.IPv6).toByteArray().slice(12))
  }
  if (METADATA_ADDRESSES.has(parsed.toString())) return 'metadata'
  const range = parsed.range()
  if (range === 'unicast') return undefined
  if (policy.allowPrivate !== true || range === 'linkLocal') return range
  // Allowed private, a transition address still may not carry a link-local or metadata address
  // to a gateway that translates it (a NAT64 network reaches 169.254.169.254 at 64:ff9b::a9fe:a9fe).
  // The local-use NAT64 prefix (64:ff9b:1::/48, RFC 8215) puts the IPv4 address where its
  // network's prefix length says (RFC 6052: after 48 bits for a /48, ...), which the address does
  // not tell: all of it is refused, as no receiver of a development setup lives there.
  if (range === 'rfc6052' && isLocalUseNat64(parsed as ipaddr.IPv6)) return 'localUseNat64'
  const carried = carriedIPv4(parsed as ipaddr.IPv6, range)
  if (carried === undefined) return undefined
  if (METADATA_ADDRESSES.has(carried.toString())) return 'metadata'
  return carried.range() === 'linkLocal' ? 'linkLocal' : undefined
}

/** The IPv4 address a NAT64 (RFC 6052), 6to4 or Teredo address carries; undefined for other ranges. */
function carriedIPv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4 | undefined {
  const bytes = address.toByteArray()
  if (range === 'rfc6052') return new ipaddr.IPv4(bytes.slice(12))
  if (range === '6to4') return new ipaddr.IPv4(bytes.slice(2, 6))
  // Teredo's client address is stored inverted in the last 32 bits; its server's, in bits 32-63.
  if (range === 'teredo') return new ipaddr.IPv4(bytes.slice(12).map((byte) => byte ^ 0xff))
  return undefined
}

function isLocalUseNat64(address: ipaddr.IPv6): boolean {
  const [first, second, third] = address.parts
  return first === 0x64 && second === 0xff9b && third === 1
}

function isIPv4Compatible(address: ipaddr.IPv6): boolean {
  const parts = address.parts
  return parts.slice(0, 6).every((part) => part === 0) && (parts[6] !== 0 || (parts[7] ?? 0) > 1)
}

/** Words for the ranges findRefusedRange names where the identifier, spelt out (describeRefusedRange), would not do. */
const RANGE_WORDS: Record<string, string> = {
  metadata: 'a cloud metadata address',
  carrierGradeNat: 'a carrier-grade NAT address',
  uniqueLocal: 'a unique-local address',
  deprecatedSiteLocal: 'a site-local address',
  localUseNat64: 'a local-use NAT64 address',
  rfc6052: 'a NAT64 address',
  rfc6145: 'an IPv4-translated address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
  as112: 'an AS112 address',
  as112v6: 'an AS112 address',
  amt: 'an AMT address',
}

/** "a loopback address", "an unspecified address": the range `findRefusedRange` named, with its article. */
export function describeRefusedRange(range: string): string {
  const words = RANGE_WORDS[range]
  if (words !== undefined) return words
  const name = range.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)
  return `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name} address`
}

export function isPublicAddress(address: string): boolean {
  return findRefusedRange(address) === undefined
}
