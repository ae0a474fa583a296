import { createHmac, type KeyObject } from 'node:crypto'

/**
 * An HMAC key: its bytes, or a KeyObject of them. The request path passes KeyObjects
 * (KeyRing.macKeyFor): createHmac imports raw bytes anew at every call.
 */
export type MacKey = Buffer | KeyObject

/** HMAC-SHA256 of the UTF-8 bytes of `text`. */
export function hmacSha256(key: MacKey, text: string): Buffer {
  return createHmac('sha256', key).update(text, 'utf8').digest()
}
