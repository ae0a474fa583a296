import { hash } from 'node:crypto'
import { parseAddress } from '../network/ip-address.js'
import { rememberPerHeaderValue } from '../recent-cache.js'

/**
 * The unit history is kept per: an IPv4 address, or an IPv6 /64. One subscriber line or one
 * server gets a whole /64, so counting single IPv6 addresses would let a client rotate through
 * 2^64 of them. Unparseable input is kept as it is (it still identifies the same peer).
 */
export function addressGroupOf(ip: string): string {
  const address = parseAddress(ip)
  if (address === undefined) return ip
  if (address.family === 4) return address.text
  const prefix = address.value >> 64n
  return `${prefix.toString(16).padStart(16, '0')}::/64`
}

/**
 * A digest of the fingerprint fields that describe the device (not those that change between
 * page loads, such as window size), so the same device hashes alike from any address.
 */
export function fingerprintDigest(fingerprint: Readonly<Record<string, unknown>>): string | undefined {
  const canvas = fingerprint.canvas
  const webgl = fingerprint.webgl
  if (typeof canvas !== 'string' || canvas === '') return undefined
  const stable = [canvas, webgl, fingerprint.platform, fingerprint.hardwareConcurrency, fingerprint.deviceMemory, fingerprint.screenWidth,
    fingerprint.screenHeight, fingerprint.timezone, fingerprint.language, fingerprint.userAgentBrands]
  return hash('sha256', JSON.stringify(stable), 'base64url').slice(0, 22)
}

/** Tags of the user agents in use, remembered (real ones repeat). */
const browserTagOfText = rememberPerHeaderValue((userAgent) => hash('sha256', userAgent, 'base64url').slice(0, 11))

/**
 * A short tag of the browser a request comes from (its User-Agent): it tells apart the people
 * behind one address (an office, a carrier's NAT), whose step-ups must not mix.
 */
export function browserTagOf(userAgent: string | undefined): string {
  return browserTagOfText(userAgent ?? '')
}
