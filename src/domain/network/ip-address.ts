import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/** A client address parsed once: its canonical text and the number the range tables are keyed by. */
export type ParsedAddress =
  | { family: 4; text: string; value: number; isPublic: boolean }
  | { family: 6; text: string; value: bigint; isPublic: boolean }

/**
 * Parses a client address as Fastify reports it. An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`,
 * what a dual-stack socket reports for an IPv4 peer) is the IPv4 address it carries: the data
 * files key IPv4 networks by their IPv4 form, and history counters must not split one client in two.
 * Returns undefined for anything that is not an IP address.
 */
export function parseAddress(raw: string): ParsedAddress | undefined {
  const withoutZone = raw.trim().replace(/%.*$/, '')
  // node:net is strict where ipaddr.js is lenient (it reads '1.2.3' as a classful address).
  if (isIP(withoutZone) === 0) return undefined
  let address = ipaddr.parse(withoutZone)
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address()
  }
  // Only global unicast space belongs to a network on the internet; private, loopback, link-local,
  // CGNAT and documentation ranges have no country or ASN and must not be judged as if they had.
  const isPublic = address.range() === 'unicast'
  const bytes = address.toByteArray()
  if (address.kind() === 'ipv4') {
    const value = ((bytes[0] ?? 0) * 2 ** 24) + ((bytes[1] ?? 0) << 16) + ((bytes[2] ?? 0) << 8) + (bytes[3] ?? 0)
    return { family: 4, text: address.toString(), value, isPublic }
  }
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  return { family: 6, text: address.toString(), value, isPublic }
}
