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
 * Format: `c2.<site>.<since>.<expiry>.<scheme>.<holder>.<mac>`: the site's id compacted to 22
 * characters, when the page first cleared the browser and when this clearance expires, both in
 * Unix seconds (base 36), `s` for a cookie of an https page (Secure, SameSite=None) or `h` for
 * plain http (SameSite=Lax), a 16-character tag of the User-Agent and address group, and
 * HMAC-SHA256 under the gate key over the exact text before the last dot. `since` and the scheme
 * let the check renew a clearance (renewalOf) with the cookie the page set, up to an absolute
 * cap. Clearances of the earlier format `c1.<site>.<expiry>.<holder>.<mac>` still pass until
 * they expire, and are not renewed. Only characters a cookie value may hold, without quoting.
 * The holder's tag is keyed too (HMAC under the gate key): a plain hash of a known User-Agent and
 * an IPv4 address could be reversed by trying every address, and the cookie also reaches the
 * protected application and its logs.
 */
const VERSION = 'c2'
const clearancePattern =
  /^(?:c1\.([A-Za-z0-9_-]{22})\.([0-9a-z]{1,10})|c2\.([A-Za-z0-9_-]{22})\.([0-9a-z]{1,10})\.([0-9a-z]{1,10})\.([sh]))\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/

/**
 * How many lifetimes (GATE_CLEARANCE_SECONDS) after the page first cleared a browser its
 * clearance may be renewed to, at most: past that the page checks the browser again.
 */
export const CLEARANCE_RENEWAL_CAP_LIFETIMES = 12

function holderTagOf(key: MacKey, holder: ClearanceHolder): string {
  return hmacSha256(key, `holder|${holder.userAgent}\n${holder.addressGroup}`).toString('base64url').slice(0, 16)
}

function macOf(key: MacKey, signedText: string): string {
  return hmacSha256(key, signedText).toString('base64url')
}

function secondsOf(epochMs: number): string {
  return Math.floor(epochMs / 1000).toString(36)
}

/** What a clearance says beyond its holder: how long it has passed and how long it may still. */
export interface ClearanceTerms {
  /** When the page first cleared the browser (epoch ms, to the second); null for the earlier format, which is not renewed. */
  since: number | null
  /** When this clearance stops passing (epoch ms, to the second). */
  expiresAt: number
  /** Whether its cookie was set for an https page (Secure, SameSite=None). */
  isSecure: boolean
}

/**
 * A clearance for `holder` until `expiresAt` (epoch ms, kept to the second), first given at
 * `since` (the page's check: `now`; a renewal keeps the first one's) for a page of https or not.
 */
export function issueClearance(key: MacKey, holder: ClearanceHolder, expiresAt: number, terms: { since: number; isSecure: boolean } = { since: expiresAt, isSecure: false }): string {
  const signedText = `${VERSION}.${compactRecurringUuid(holder.siteId)}.${secondsOf(terms.since)}.${secondsOf(expiresAt)}.${terms.isSecure ? 's' : 'h'}.${holderTagOf(key, holder)}`
  return `${signedText}.${macOf(key, signedText)}`
}

/**
 * The terms of `text` when it is a clearance this service issued for `holder` that is still
 * valid at `now` (its MAC, constant-time; its site, its browser and address group, its expiry),
 * else null. Any changed character makes it invalid.
 */
export function readClearance(key: MacKey, text: string, holder: ClearanceHolder, now: number): ClearanceTerms | null {
  const match = clearancePattern.exec(text)
  if (match === null) return null
  const [, oldSite, oldExpiry, site = oldSite ?? '', since, expiry = oldExpiry ?? '', scheme, holderTag = '', mac = ''] = match
  const expected = Buffer.from(macOf(key, text.slice(0, text.length - mac.length - 1)), 'utf8')
  if (!isSameInConstantTime(expected, Buffer.from(mac, 'utf8'))) return null
  const expiresAt = Number.parseInt(expiry, 36) * 1000
  if (expandUuid(site) !== holder.siteId || holderTag !== holderTagOf(key, holder) || now >= expiresAt) return null
  return { since: since === undefined ? null : Number.parseInt(since, 36) * 1000, expiresAt, isSecure: scheme === 's' }
}

/**
 * When a valid clearance is past half its life (`lifetimeMs`, GATE_CLEARANCE_SECONDS), the
 * terms of the one that renews it, which expires a lifetime from `now`, but never past
 * CLEARANCE_RENEWAL_CAP_LIFETIMES lifetimes after the page first cleared the browser. Null while
 * it is younger, past that cap, or of the earlier format: then the cookie stays as it is. So a
 * browser that keeps using the site (a person filling in a long form, whose POST would lose its
 * body at the gate's page) keeps its clearance, while one copied away still ends.
 */
export function renewalOf(terms: ClearanceTerms, lifetimeMs: number, now: number): { since: number; expiresAt: number } | null {
  const { since } = terms
  if (since === null || terms.expiresAt - now > lifetimeMs / 2) return null
  const renewedTo = Math.floor(Math.min(now + lifetimeMs, since + CLEARANCE_RENEWAL_CAP_LIFETIMES * lifetimeMs) / 1000) * 1000
  return renewedTo > terms.expiresAt ? { since, expiresAt: renewedTo } : null
}
