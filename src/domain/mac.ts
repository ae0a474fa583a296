import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto'

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

/** HMAC-SHA256 of the UTF-8 bytes of `text`. */
export function hmacSha256(key: MacKey, text: string): Buffer {
  return createHmac('sha256', key).update(text, 'utf8').digest()
}
