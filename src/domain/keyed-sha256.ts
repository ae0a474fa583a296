import { createHash, type KeyObject } from 'node:crypto'
import { compressInto, INITIAL_STATE } from '../../sdk/src/solver/sha256.js'

/**
 * HMAC-SHA256 of short texts in JavaScript, for the request path's MACs (the challenge, the
 * client's tag, the token, the device's ephemeral id). Node's createHmac costs about 3 µs per call
 * on the project's host whatever the text's length, nearly all of it in setting up OpenSSL's
 * context; the SHA-256 work of a 100-byte text is four 64-byte blocks. Here the key's two padded
 * blocks are compressed once per key (its midstates), so an HMAC of a text of up to 55 bytes
 * costs two compressions, of up to 119 bytes three: about half of createHmac's time
 * (bench/README.md, "The session of 2026-12-02 (forty-fifth)").
 *
 * The compression is the SDK's (sdk/src/solver/sha256.ts), which its solver and signals use.
 * Nothing here branches on or indexes by the key or the text: the time depends on the text's
 * length only, as OpenSSL's does. A compression here costs about eight times OpenSSL's, so longer
 * texts than MAX_TEXT_LENGTH are left to createHmac (mac.ts), whose setup no longer dominates.
 */

/**
 * UTF-16 units of the longest text taken: a token's signed text (about 250 ASCII characters, five
 * blocks) is the longest the routes sign, and at 320 ASCII bytes this still takes less time than
 * createHmac (bench/core/mac.ts).
 */
export const MAX_TEXT_LENGTH = 320

/** A block's 16 words, big-endian, read from `bytes` at `offset`. */
function readBlock(bytes: Uint8Array, offset: number, block: Uint32Array): Uint32Array {
  for (let i = 0; i < 16; i++) {
    const at = offset + i * 4
    block[i] = ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0
  }
  return block
}

/** A key's inner and outer midstates: SHA-256's state after its block XOR 0x36 and after its block XOR 0x5c. */
interface Midstates {
  inner: Uint32Array
  outer: Uint32Array
}

function midstatesOf(rawKey: Buffer): Midstates {
  // RFC 2104: a key longer than the block is hashed first; a shorter one is padded with zeros.
  const keyBlock = new Uint8Array(64)
  keyBlock.set(rawKey.length > 64 ? createHash('sha256').update(rawKey).digest() : rawKey)
  const padded = (pad: number) => compressInto(Uint32Array.from(INITIAL_STATE), readBlock(keyBlock.map((byte) => byte ^ pad), 0, new Uint32Array(16)), new Uint32Array(8))
  const midstates = { inner: padded(0x36), outer: padded(0x5c) }
  keyBlock.fill(0)
  return midstates
}

/** Midstates per KeyObject (immutable, unlike a Buffer); the key ring hands out one per purpose. */
const midstatesByKey = new WeakMap<KeyObject, Midstates>()

/** The text's bytes, padded as SHA-256 pads them after the inner block (UTF-8 takes at most 3 bytes per UTF-16 unit). */
const message = Buffer.alloc(MAX_TEXT_LENGTH * 3 + 72)
const block = new Uint32Array(16)
const state = new Uint32Array(8)
/** The outer hash's one block: the inner digest (words 0-7), then its padding for 64 + 32 bytes. */
const outerBlock = Uint32Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0x80000000, 0, 0, 0, 0, 0, 0, (64 + 32) * 8)

/** HMAC-SHA256 of the UTF-8 bytes of `text` (at most MAX_TEXT_LENGTH UTF-16 units) under a secret KeyObject. */
export function keyedSha256(key: KeyObject, text: string): Buffer {
  if (text.length > MAX_TEXT_LENGTH) throw new RangeError(`keyedSha256 takes texts of at most ${MAX_TEXT_LENGTH} UTF-16 units`)
  let midstates = midstatesByKey.get(key)
  if (midstates === undefined) {
    midstates = midstatesOf(key.export())
    midstatesByKey.set(key, midstates)
  }
  const length = message.write(text, 0, 'utf8')
  const paddedLength = (((length + 8) >>> 6) + 1) << 6
  message[length] = 0x80
  message.fill(0, length + 1, paddedLength - 4)
  // The inner hash's length in bits counts the key's block; texts this short fit in 32 bits.
  message.writeUInt32BE((64 + length) * 8, paddedLength - 4)

  state.set(midstates.inner)
  for (let offset = 0; offset < paddedLength; offset += 64) compressInto(state, readBlock(message, offset, block), state)
  outerBlock.set(state)
  state.set(midstates.outer)
  compressInto(state, outerBlock, state)

  const digest = Buffer.allocUnsafe(32)
  for (let i = 0; i < 8; i++) digest.writeUInt32BE(state[i]!, i * 4)
  return digest
}
