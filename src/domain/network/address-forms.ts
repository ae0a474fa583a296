import ipaddr from 'ipaddr.js'
import { parseDottedQuad, parseIpAddress } from './ip-address.js'

/**
 * The address as the log keeps it under LOG_CLIENT_IP=full: in one spelling whatever the request
 * wrote (a proxy's X-Forwarded-For may write IPv6 in capitals or with leading zeros), IPv6 lower
 * case and compressed (RFC 5952: 2001:db8::1), an IPv4-mapped one as its IPv4 address, as
 * truncateAddress spells a network. Text that is not an address is kept as it is.
 */
export function canonicalAddress(text: string): string {
  // Every verification logs its client's address; a canonical dotted quad, the common case, is its own form.
  if (parseDottedQuad(text) !== undefined) return text
  return parseIpAddress(text)?.toString() ?? text
}

/**
 * The texts, in lower case, under which the verification log may hold one visitor address, as its
 * filter and its erasure look it up (comparing the row's address in lower case): the canonical
 * form (canonicalAddress), and those of rows logged before the log canonicalised: IPv4 also as
 * `::ffff:a.b.c.d` (a dual-stack listener's report), IPv6 also in full (2001:db8:0:0:0:0:0:1) and
 * as the query writes it. An IPv6 row logged with leading zeros (2001:0db8::1) before then is found
 * only by a query that writes it so.
 * Undefined when `text` is not an IP address; a zone (`fe80::1%eth0`) is not accepted: no visitor
 * has one (a log row never holds one).
 */
export function addressFormsOf(text: string): string[] | undefined {
  if (text.includes('%')) return undefined
  const address = parseIpAddress(text)
  if (address === undefined) return undefined
  const canonical = address.toString()
  const forms = address.kind() === 'ipv4' ? [canonical, `::ffff:${canonical}`] : [canonical, (address as ipaddr.IPv6).toNormalizedString()]
  return [...new Set([...forms, text.toLowerCase()])]
}

/** How the verification log keeps a visitor's address (LOG_CLIENT_IP). */
export const clientIpLogModes = ['full', 'truncated'] as const
export type ClientIpLogMode = (typeof clientIpLogModes)[number]

/**
 * The address as the log keeps it under LOG_CLIENT_IP=truncated: its network, IPv4 /24
 * (203.0.113.0) or IPv6 /48 (2001:db8:1::), the prefixes that name a provider's customer or an
 * office rather than one device, as web analytics' IP anonymisation does. An IPv4-mapped IPv6
 * address is truncated as the IPv4 address it carries; text that is not an address is dropped (null).
 */
export function truncateAddress(text: string): string | null {
  const address = parseIpAddress(text)
  if (address === undefined) return null
  const bytes = address.toByteArray()
  const kept = address.kind() === 'ipv4' ? 3 : 6
  return ipaddr.fromByteArray(bytes.map((byte, index) => (index < kept ? byte : 0))).toString()
}

/**
 * Whether a logged address is a network as LOG_CLIENT_IP=truncated writes it (its own /24 or /48):
 * a row logged under truncated, whatever the mode now. A full address that happens to be one
 * (203.0.113.0, 2001:db8:1::) is taken for a network too: no single client is known by it.
 */
export function isNetworkAddress(text: string): boolean {
  return truncateAddress(text) === canonicalAddress(text)
}
