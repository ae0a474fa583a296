import { compactRecurringUuid, expandUuid } from '../challenge/compact-uuid.js'
import { hmacSha256, isSameInConstantTime, type MacKey } from '../mac.js'

/** The cookie that carries a visitor's clearance on the protected host. */
export const CLEARANCE_COOKIE = 'tollgate_clearance'

/**
 * How many clearance cookies of one request are tried: a browser may hold two (one left by an
 * older path or domain beside the current one), and sends them in one Cookie header; a request
 * with dozens is no browser's, and each one tried costs two HMACs.
 */
export const MAX_CLEARANCES_TRIED = 4

/**
 * How many cookies of one Cookie header are looked at: Chrome keeps at most 180 per domain, and
 * a header past that is no browser's.
 */
export const MAX_COOKIES_SCANNED = 200

/**
 * The values of the clearance cookies in a Cookie header, in its order, without the one pair of
 * double quotes a cookie value may carry: at most MAX_CLEARANCES_TRIED of those that have a
 * clearance's form (a browser holding a stale one beside its valid one sends both, the stale one
 * first as often as not; junk ones that a sibling subdomain planted do not hide a valid one).
 */
export function clearancesIn(cookieHeader: string | undefined): string[] {
  const values: string[] = []
  for (const pair of (cookieHeader ?? '').split(';', MAX_COOKIES_SCANNED)) {
    const separator = pair.indexOf('=')
    if (separator === -1 || pair.slice(0, separator).trim() !== CLEARANCE_COOKIE) continue
    const value = pair.slice(separator + 1).trim().replace(/^"(.*)"$/, '$1')
    if (!clearancePattern.test(value)) continue
    values.push(value)
    if (values.length === MAX_CLEARANCES_TRIED) break
  }
  return values
}

/** Who a clearance is for: a site's gate, one browser (its User-Agent) at one address group. */
export interface ClearanceHolder {
  siteId: string
  userAgent: string
  /** The client's IPv4 address or IPv6 /64 (addressGroupOf). */
  addressGroup: string
}

/*
 * Format: `c1.<site>.<expiry>.<holder>.<mac>`: the site's id compacted to 22 characters, the
 * expiry in Unix seconds (base 36), a 16-character tag of the User-Agent and address group, and
 * HMAC-SHA256 under the gate key over the exact text before the last dot. Only characters a
 * cookie value may hold, without quoting. The holder's tag is keyed too (HMAC under the gate
 * key): a plain hash of a known User-Agent and an IPv4 address could be reversed by trying every
 * address, and the cookie also reaches the protected application and its logs.
 */
const VERSION = 'c1'
const clearancePattern = /^c1\.([A-Za-z0-9_-]{22})\.([0-9a-z]{1,10})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/

function holderTagOf(key: MacKey, holder: ClearanceHolder): string {
  return hmacSha256(key, `holder|${holder.userAgent}\n${holder.addressGroup}`).toString('base64url').slice(0, 16)
}

function macOf(key: MacKey, signedText: string): string {
  return hmacSha256(key, signedText).toString('base64url')
}

/** A clearance for `holder` until `expiresAt` (epoch ms, kept to the second). */
export function issueClearance(key: MacKey, holder: ClearanceHolder, expiresAt: number): string {
  const signedText = `${VERSION}.${compactRecurringUuid(holder.siteId)}.${Math.floor(expiresAt / 1000).toString(36)}.${holderTagOf(key, holder)}`
  return `${signedText}.${macOf(key, signedText)}`
}

/**
 * Whether `text` is a clearance this service issued for `holder` that is still valid at `now`:
 * its MAC (constant-time), its site, its browser and address group, its expiry. Any changed
 * character makes it invalid.
 */
export function isClearedBy(key: MacKey, text: string, holder: ClearanceHolder, now: number): boolean {
  const match = clearancePattern.exec(text)
  if (match === null) return false
  const [, site = '', expiry = '', holderTag = '', mac = ''] = match
  const expected = Buffer.from(macOf(key, text.slice(0, text.length - mac.length - 1)), 'utf8')
  if (!isSameInConstantTime(expected, Buffer.from(mac, 'utf8'))) return false
  return expandUuid(site) === holder.siteId && holderTag === holderTagOf(key, holder) && now < Number.parseInt(expiry, 36) * 1000
}
