import { hmacSha256, type MacKey } from '../mac.js'

const DAY_MS = 86_400_000

/** How long one device keeps one ephemeral id on one site: a week, from Monday 00:00 UTC. */
export const EPHEMERAL_ID_PERIOD_MS = 7 * DAY_MS

/** 1970-01-01 was a Thursday: the first Monday began four days later. */
const FIRST_MONDAY_MS = 4 * DAY_MS

/**
 * A device's ephemeral id on a site (Turnstile's `metadata.ephemeral_id`), which Siteverify hands
 * the site's backend: the same device (its fingerprint's stable fields, fingerprintDigest) gets the
 * same id on that site all week, from any address, so the backend can tell that one device is
 * behind many sign-ups or log-ins. The id is an HMAC under the server's own key: it cannot be
 * computed from the fingerprint by anyone else, the same device gets unrelated ids on two sites
 * (sites cannot join their records by it), and it changes every Monday at 00:00 UTC, so it does
 * not follow a device for longer than a week. 96 bits, as 24 lowercase hexadecimal digits.
 */
export function ephemeralIdOf(key: MacKey, siteId: string, deviceDigest: string, now: number): string {
  const week = Math.floor((now - FIRST_MONDAY_MS) / EPHEMERAL_ID_PERIOD_MS)
  return hmacSha256(key, `${siteId}.${week}.${deviceDigest}`).subarray(0, 12).toString('hex')
}
