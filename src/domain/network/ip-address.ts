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
  // Every request parses its client's address; the common dotted-quad case skips ipaddr.js.
  const ipv4 = parseDottedQuad(raw)
  if (ipv4 !== undefined) return { family: 4, text: raw, value: ipv4, isPublic: isPublicIpv4(ipv4) }
  const address = parseIpAddress(raw.trim().replace(/%.*$/, ''))
  if (address === undefined) return undefined
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

/** The address `text` names, IPv4-mapped IPv6 as the IPv4 address it carries; undefined when it names none. */
export function parseIpAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  // node:net is strict where ipaddr.js is lenient (it reads '1.2.3' as a classful address).
  if (isIP(text) === 0) return undefined
  const address = ipaddr.parse(text)
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address
}

/**
 * A canonical dotted quad (four decimal numbers 0-255 without leading zeros, as sockets and
 * Fastify report IPv4 peers) as its 32-bit value; undefined for any other text. `start` reads the
 * quad at the end of a longer text (`::ffff:1.2.3.4`) without slicing it.
 */
export function parseDottedQuad(text: string, start = 0): number | undefined {
  let value = 0
  let part = 0
  let digits = 0
  let parts = 0
  for (let index = start; index <= text.length; index++) {
    const code = index < text.length ? text.charCodeAt(index) : 46 // a final '.' ends the last part
    if (code === 46) {
      if (digits === 0 || part > 255) return undefined
      value = value * 256 + part
      parts++
      part = 0
      digits = 0
    } else if (code >= 48 && code <= 57) {
      if (digits > 0 && part === 0) return undefined // a leading zero
      part = part * 10 + (code - 48)
      digits++
      if (digits > 3) return undefined
    } else {
      return undefined
    }
  }
  return parts === 4 ? value : undefined
}

/**
 * The IPv4 ranges that ipaddr.js's range() names other than 'unicast' (private, loopback,
 * link-local, CGNAT, documentation, multicast, reserved...), as [first, last] values, taken
 * from ipaddr.js itself so that both paths judge alike.
 */
const specialIpv4Ranges: readonly (readonly [number, number])[] = (() => {
  const table = (ipaddr.IPv4.prototype as unknown as { SpecialRanges: Record<string, [ipaddr.IPv4, number][]> }).SpecialRanges
  return Object.values(table).flat().map(([network, bits]) => {
    const [a = 0, b = 0, c = 0, d = 0] = network.toByteArray()
    const first = ((a * 256 + b) * 256 + c) * 256 + d
    return [first, first + 2 ** (32 - bits) - 1] as const
  })
})()

function isPublicIpv4(value: number): boolean {
  for (const [first, last] of specialIpv4Ranges) if (value >= first && value <= last) return false
  return true
}
