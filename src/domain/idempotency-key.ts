import { hmacSha256, type MacKey } from './mac.js'

/** How long a key's first answer is replayed (Stripe's window); a key older than this starts afresh. */
export const IDEMPOTENCY_WINDOW_HOURS = 24

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255

/** Printable ASCII, space to tilde: what a header carries unchanged through every proxy. */
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/

/** Why the header's value cannot be a key, or undefined when it can. */
export function findIdempotencyKeyProblem(key: string): string | undefined {
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH || !PRINTABLE_ASCII.test(key)) {
    return `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters (a UUID is a good choice).`
  }
  return undefined
}

/** The value as JSON with every object's keys sorted: one text for bodies that differ only in key order. */
function canonicalJsonOf(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJsonOf).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, member]) => member !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJsonOf(member)}`).join(',')}}`
  }
  return JSON.stringify(value ?? null)
}

/**
 * What tells a retry from another request under the same key: an HMAC of the parsed body in
 * canonical JSON, so that a client re-encoding the same body (other key order, other spacing) is
 * still retrying. It is kept instead of the body, which may hold a webhook secret;
 * keyed (by a key from TOLLGATE_SECRET), so that a copy of the database alone cannot test guesses
 * of them against it, as it could a plain hash.
 */
export function requestHashOf(key: MacKey, body: unknown): string {
  return hmacSha256(key, canonicalJsonOf(body)).toString('base64url')
}
