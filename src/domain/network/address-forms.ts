import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * The texts under which the verification log may hold one visitor address, as its filter and its
 * erasure look it up: the log keeps the address as the request reported it (a dual-stack listener
 * reports an IPv4 peer as `::ffff:1.2.3.4`, a proxy may write IPv6 in capitals), so an IPv4
 * address is looked up in both forms and an IPv6 one as given and in its canonical form.
 * Undefined when `text` is not an IP address (a zone, `%eth0`, is not accepted: no visitor has one).
 */
export function addressFormsOf(text: string): string[] | undefined {
  if (isIP(text) === 0) return undefined
  let address = ipaddr.parse(text)
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address()
  const canonical = address.toString()
  const forms = address.kind() === 'ipv4' ? [canonical, `::ffff:${canonical}`] : [canonical, (address as ipaddr.IPv6).toNormalizedString()]
  return [...new Set([text, text.toLowerCase(), ...forms])]
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
  if (isIP(text) === 0) return null
  let address = ipaddr.parse(text)
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address()
  const bytes = address.toByteArray()
  const kept = address.kind() === 'ipv4' ? 3 : 6
  return ipaddr.fromByteArray(bytes.map((byte, index) => (index < kept ? byte : 0))).toString()
}
