import { createHash, type KeyObject } from 'node:crypto'

/**
 * HMAC-SHA256 of short texts in JavaScript, for the request path's MACs (the challenge, the
 * client's tag, the token, the device's ephemeral id). Node's createHmac costs about 3 µs per call
 * on the project's host whatever the text's length, nearly all of it in setting up OpenSSL's
 * context; the SHA-256 work of a 100-byte text is four 64-byte blocks. Here the key's two padded
 * blocks are compressed once per key (its midstates), so an HMAC of a text of up to 55 bytes
 * costs two compressions, of up to 119 bytes three: about half of createHmac's time
 * (bench/README.md, "The session of 2026-12-02 (forty-fifth)").
 *
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

/** SHA-256's round constants: the first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
const ROUND_CONSTANTS = new Int32Array(64)
{
  let found = 0
  for (let candidate = 2; found < 64; candidate++) {
    let isPrime = true
    for (let divisor = 2; divisor * divisor <= candidate; divisor++) {
      if (candidate % divisor === 0) {
        isPrime = false
        break
      }
    }
    if (isPrime) ROUND_CONSTANTS[found++] = Math.floor((Math.cbrt(candidate) % 1) * 2 ** 32) | 0
  }
}

const INITIAL_STATE = Int32Array.of(0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)

/** The message schedule, reused by every compression (JavaScript runs one at a time). */
const schedule = new Int32Array(64)

/** Compresses the 64-byte block of `bytes` at `offset` into `state`. */
function compress(state: Int32Array, bytes: Uint8Array, offset: number): void {
  const w = schedule
  for (let i = 0; i < 16; i++) {
    const at = offset + i * 4
    w[i] = (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!
  }
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15]!
    const y = w[i - 2]!
    const sigma0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)
    const sigma1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)
    w[i] = (w[i - 16]! + sigma0 + w[i - 7]! + sigma1) | 0
  }
  let a = state[0]!
  let b = state[1]!
  let c = state[2]!
  let d = state[3]!
  let e = state[4]!
  let f = state[5]!
  let g = state[6]!
  let h = state[7]!
  for (let i = 0; i < 64; i++) {
    const sum1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))
    const t1 = (h + sum1 + ((e & f) ^ (~e & g)) + ROUND_CONSTANTS[i]! + w[i]!) | 0
    const sum0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))
    const t2 = (sum0 + ((a & b) ^ (a & c) ^ (b & c))) | 0
    h = g
    g = f
    f = e
    e = (d + t1) | 0
    d = c
    c = b
    b = a
    a = (t1 + t2) | 0
  }
  state[0] = (state[0]! + a) | 0
  state[1] = (state[1]! + b) | 0
  state[2] = (state[2]! + c) | 0
  state[3] = (state[3]! + d) | 0
  state[4] = (state[4]! + e) | 0
  state[5] = (state[5]! + f) | 0
  state[6] = (state[6]! + g) | 0
  state[7] = (state[7]! + h) | 0
}

/** A key's inner and outer midstates: SHA-256's state after its block XOR 0x36 and after its block XOR 0x5c. */
interface Midstates {
  inner: Int32Array
  outer: Int32Array
}

function midstatesOf(rawKey: Buffer): Midstates {
  // RFC 2104: a key longer than the block is hashed first; a shorter one is padded with zeros.
  const block = new Uint8Array(64)
  block.set(rawKey.length > 64 ? createHash('sha256').update(rawKey).digest() : rawKey)
  const padded = (pad: number) => {
    const state = INITIAL_STATE.slice()
    compress(state, block.map((byte) => byte ^ pad), 0)
    return state
  }
  const midstates = { inner: padded(0x36), outer: padded(0x5c) }
  block.fill(0)
  return midstates
}

/** Midstates per KeyObject (immutable, unlike a Buffer); the key ring hands out one per purpose. */
const midstatesByKey = new WeakMap<KeyObject, Midstates>()

/** The text's bytes, padded as SHA-256 pads them after the inner block (UTF-8 takes at most 3 bytes per UTF-16 unit). */
const message = Buffer.alloc(MAX_TEXT_LENGTH * 3 + 72)
const state = new Int32Array(8)
const outerBlock = new Uint8Array(64)

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
  writeWord(message, paddedLength - 4, (64 + length) * 8)

  state.set(midstates.inner)
  for (let offset = 0; offset < paddedLength; offset += 64) compress(state, message, offset)
  for (let i = 0; i < 8; i++) writeWord(outerBlock, i * 4, state[i]!)
  outerBlock[32] = 0x80
  outerBlock.fill(0, 33, 60)
  writeWord(outerBlock, 60, (64 + 32) * 8)
  state.set(midstates.outer)
  compress(state, outerBlock, 0)

  const digest = Buffer.allocUnsafe(32)
  for (let i = 0; i < 8; i++) writeWord(digest, i * 4, state[i]!)
  return digest
}

function writeWord(bytes: Uint8Array, offset: number, word: number): void {
  bytes[offset] = word >>> 24
  bytes[offset + 1] = word >>> 16
  bytes[offset + 2] = word >>> 8
  bytes[offset + 3] = word
}
