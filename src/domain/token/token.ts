import { compactRecurringUuid, compactUuid, expandUuid } from '../challenge/compact-uuid.js'
import { hmacSha256, isSameInConstantTime, type MacKey } from '../mac.js'

/** How long a token can be redeemed with Siteverify (DESIGN section 6). */
export const TOKEN_LIFETIME_MS = 300_000

/** Longest token Siteverify considers; longer input is rejected before any work. */
export const MAX_TOKEN_LENGTH = 2048

/** What a token asserts. Siteverify answers from these claims alone. */
export interface TokenClaims {
  siteId: string
  /** The site's public key: lets Siteverify find the site in the in-memory site cache. */
  siteKey: string
  challengeId: string
  /** The recommended action when the token was issued (tokens are issued for allow). */
  action: 'allow' | 'challenge' | 'block'
  riskScore: number
  anomalies: string[]
  /** From the submission's Origin or Referer; null when it sent neither. */
  hostname: string | null
  countryCode: string
  /** Epoch milliseconds. */
  issuedAt: number
  /**
   * The store's data epoch (KeyValueStore.dataEpoch) the issuing instance knew: Siteverify refuses
   * the token once the store's is another. Null in a token issued before tokens carried it, or
   * while the instance had not read it (Siteverify compares issuedAt with remembersSince then).
   */
  dataEpoch: number | null
  /** The page's action name and data (Turnstile's action and cData), when the page gave them. */
  pageAction: string | null
  cData: string | null
  /** The device's ephemeral id on the site (ephemeralIdOf), when the submission described a device. */
  ephemeralId: string | null
  /**
   * Where the token was earned (addressClaimOf: the family and a keyed tag of the address group),
   * when the site checks tokens' addresses (settings.tokenAddressCheck); null otherwise.
   */
  address: string | null
}

export type TokenReading =
  | { outcome: 'valid'; claims: TokenClaims; expiresAt: number }
  | { outcome: 'expired'; claims: TokenClaims; expiresAt: number }
  | { outcome: 'invalid' }

const VERSION = 'v1'
const tokenPattern = /^v1\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/
const actions = new Set(['allow', 'challenge', 'block'])

/*
 * Format: `v1.<payload>.<mac>`, both parts base64url. The payload is a JSON array (positional, so
 * no key names are repeated in every token): [site, siteKey, challenge, action, riskScore,
 * anomalies, hostname, countryCode, issuedAt], then the data epoch (a number, told from what may
 * follow by its type; absent in older tokens), then [pageAction, cData] only when the page gave
 * either or there is an ephemeral id or an address, then that id (or null) when there is one or an
 * address, and the address last when there is one (a token without them is as short as before),
 * ids compacted to 22 characters. The MAC is HMAC-SHA256 under
 * the server's token key over the exact text `v1.<payload>`.
 *
 * HMAC rather than Ed25519: only this service ever verifies its tokens (Siteverify), so a
 * public-key signature buys nothing, while HMAC is far cheaper to check (about 1 µs against
 * Ed25519's ~50 µs) and its 32-byte MAC keeps the token 43 characters shorter than a 64-byte
 * signature. The MAC covers the text as sent (not the decoded bytes): base64url decoders ignore
 * stray bits in the last character, and checking the text makes every changed character
 * invalidate the token.
 */
function macOf(key: MacKey, signedText: string): string {
  return hmacSha256(key, signedText).toString('base64url')
}

export function issueToken(key: MacKey, claims: TokenClaims): string {
  const payload = Buffer.from(
    JSON.stringify([
      compactRecurringUuid(claims.siteId),
      claims.siteKey,
      compactUuid(claims.challengeId),
      claims.action,
      claims.riskScore,
      claims.anomalies,
      claims.hostname,
      claims.countryCode,
      claims.issuedAt,
      ...(claims.dataEpoch === null ? [] : [claims.dataEpoch]),
      ...optionalClaims(claims),
    ]),
    'utf8',
  ).toString('base64url')
  const signedText = `${VERSION}.${payload}`
  return `${signedText}.${macOf(key, signedText)}`
}

/** The claims a token carries only when they have a value: [pageAction, cData[, ephemeralId[, address]]] or none. */
function optionalClaims({ pageAction, cData, ephemeralId, address }: TokenClaims): (string | null)[] {
  if (address !== null) return [pageAction, cData, ephemeralId, address]
  if (ephemeralId !== null) return [pageAction, cData, ephemeralId]
  return pageAction === null && cData === null ? [] : [pageAction, cData]
}

/**
 * Checks a token: format, MAC (constant-time), then its lifetime. An expired token still reports
 * its claims, so that Siteverify can tell "too late" from "forged".
 */
export function readToken(key: MacKey, token: string, now: number): TokenReading {
  if (token.length > MAX_TOKEN_LENGTH) return { outcome: 'invalid' }
  const match = tokenPattern.exec(token)
  if (match === null) return { outcome: 'invalid' }
  const [, payload = '', mac = ''] = match
  const expected = Buffer.from(macOf(key, `${VERSION}.${payload}`), 'utf8')
  const presented = Buffer.from(mac, 'utf8')
  if (!isSameInConstantTime(expected, presented)) return { outcome: 'invalid' }
  const claims = parseClaims(Buffer.from(payload, 'base64url').toString('utf8'))
  // A token with a valid MAC was written by this service; a payload that does not parse means a
  // format change without a version bump, so it is refused rather than trusted half-read.
  if (claims === undefined) return { outcome: 'invalid' }
  const expiresAt = claims.issuedAt + TOKEN_LIFETIME_MS
  return { outcome: now < expiresAt ? 'valid' : 'expired', claims, expiresAt }
}

function parseClaims(json: string): TokenClaims | undefined {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return undefined
  }
  if (!Array.isArray(value)) return undefined
  const values = value as unknown[]
  // The data epoch after issuedAt, when there is one: a number, where an older token has a string or null.
  const dataEpoch = typeof values[9] === 'number' ? values[9] : null
  const claims = dataEpoch === null ? values : [...values.slice(0, 9), ...values.slice(10)]
  if (claims.length !== 9 && claims.length !== 11 && claims.length !== 12 && claims.length !== 13) return undefined
  const [site, siteKey, challenge, action, riskScore, anomalies, hostname, countryCode, issuedAt, pageAction = null, cData = null, ephemeralId = null, address = null] = claims
  const siteId = typeof site === 'string' ? expandUuid(site) : undefined
  const challengeId = typeof challenge === 'string' ? expandUuid(challenge) : undefined
  if (
    siteId === undefined ||
    typeof siteKey !== 'string' ||
    challengeId === undefined ||
    typeof action !== 'string' ||
    !actions.has(action) ||
    !Number.isInteger(riskScore) ||
    !Array.isArray(anomalies) ||
    !anomalies.every((label) => typeof label === 'string') ||
    !(hostname === null || typeof hostname === 'string') ||
    typeof countryCode !== 'string' ||
    !Number.isSafeInteger(issuedAt) ||
    !(pageAction === null || typeof pageAction === 'string') ||
    !(cData === null || typeof cData === 'string') ||
    !(ephemeralId === null || typeof ephemeralId === 'string') ||
    !(address === null || typeof address === 'string')
  ) {
    return undefined
  }
  return {
    siteId,
    siteKey,
    challengeId,
    action: action as TokenClaims['action'],
    riskScore: riskScore as number,
    anomalies,
    hostname,
    countryCode,
    issuedAt: issuedAt as number,
    dataEpoch,
    pageAction,
    cData,
    ephemeralId,
    address,
  }
}
