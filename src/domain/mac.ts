import { createHmac, KeyObject, timingSafeEqual } from 'node:crypto'
import { keyedSha256, MAX_TEXT_LENGTH } from './keyed-sha256.js'

/**
 * An HMAC key: its bytes, or a KeyObject of them. The request path passes KeyObjects
 * (KeyRing.macKeyFor): createHmac imports raw bytes anew at every call.
 */
export type MacKey = Buffer | KeyObject

/**
 * Whether a presented MAC, hash or key check equals the expected one, in time that does not depend
 * on where they differ (a length that differs tells nothing secret: it is public).
 */
export function isSameInConstantTime(expected: Buffer, presented: Buffer): boolean {
  return expected.length === presented.length && timingSafeEqual(expected, presented)
}

/**
 * HMAC-SHA256 of the UTF-8 bytes of `text`. The request path's short texts under a KeyObject are
 * computed in JavaScript from the key's cached midstates (keyed-sha256.ts), in half of
 * createHmac's time; everything else goes to OpenSSL.
 */
export function hmacSha256(key: MacKey, text: string): Buffer {
  if (key instanceof KeyObject && text.length <= MAX_TEXT_LENGTH) return keyedSha256(key, text)
  return createHmac('sha256', key).update(text, 'utf8').digest()
}
