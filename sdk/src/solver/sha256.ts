/**
 * SHA-256 (FIPS 180-4) on 32-bit words. The solver needs the compression function on its own
 * (to precompute the challenge block once); the signals need a whole-message hash that works
 * without `crypto.subtle`, which is missing on plain-HTTP pages.
 */

/**
 * The first 32 bits of the fractional parts of the square or cube roots of the first primes
 * (FIPS 180-4, 4.2.2 and 5.3.3), computed instead of listed: the list cost the worker 450 bytes
 * of gzip. One unit in the last place of a root moves the kept fraction by under 1e-5 of its
 * last bit, and every one of these lies at least 0.005 of a bit from where truncation would tip
 * over: any engine's Math.cbrt and Math.sqrt, off by a few units at most, give the published
 * values (a test checks the margin).
 */
function rootFractions(count: number, root: (n: number) => number): number[] {
  const primes: number[] = []
  for (let n = 2; primes.length < count; n++) if (primes.every((prime) => n % prime !== 0)) primes.push(n)
  return primes.map((prime) => {
    const value = root(prime)
    return ((value - Math.floor(value)) * 2 ** 32) >>> 0
  })
}

export const ROUND_CONSTANTS: readonly number[] = rootFractions(64, Math.cbrt)

export const INITIAL_STATE: readonly number[] = rootFractions(8, Math.sqrt)

const schedule = new Int32Array(64)
const constants = Int32Array.from(ROUND_CONSTANTS)

/** One compression: returns the new state (8 words, unsigned) for `block` (16 words) on `state`. */
export function compressBlock(state: ArrayLike<number>, block: ArrayLike<number>): Uint32Array {
  return compressInto(Uint32Array.from(state), Uint32Array.from(block), new Uint32Array(8))
}

/**
 * The same on typed arrays without allocating, for the fallback solver's inner loop. The
 * `as number` casts are sound: every index stays within the fixed array lengths.
 */
export function compressInto(state: Uint32Array, block: Uint32Array, out: Uint32Array): Uint32Array {
  const w = schedule
  for (let t = 0; t < 16; t++) w[t] = block[t] as number
  for (let t = 16; t < 64; t++) {
    const x = w[t - 15] as number
    const y = w[t - 2] as number
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)
    w[t] = (s1 + (w[t - 7] as number) + s0 + (w[t - 16] as number)) | 0
  }
  let a = state[0] as number, b = state[1] as number, c = state[2] as number, d = state[3] as number
  let e = state[4] as number, f = state[5] as number, g = state[6] as number, h = state[7] as number
  for (let t = 0; t < 64; t++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))
    const t1 = (h + s1 + (g ^ (e & (f ^ g))) + (constants[t] as number) + (w[t] as number)) | 0
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))
    const t2 = (s0 + ((a & b) | (c & (a | b)))) | 0
    h = g
    g = f
    f = e
    e = (d + t1) | 0
    d = c
    c = b
    b = a
    a = (t1 + t2) | 0
  }
  out[0] = (state[0] as number) + a
  out[1] = (state[1] as number) + b
  out[2] = (state[2] as number) + c
  out[3] = (state[3] as number) + d
  out[4] = (state[4] as number) + e
  out[5] = (state[5] as number) + f
  out[6] = (state[6] as number) + g
  out[7] = (state[7] as number) + h
  return out
}

/** SHA-256 of a whole message. */
export function sha256(message: Uint8Array): Uint8Array {
  const bitLength = message.length * 8
  const blockCount = Math.ceil((message.length + 9) / 64)
  const padded = new Uint8Array(blockCount * 64)
  padded.set(message)
  padded[message.length] = 0x80
  const view = new DataView(padded.buffer)
  // Messages here are far below 2^32 bits, so the high length word stays zero.
  view.setUint32(padded.length - 4, bitLength >>> 0)
  view.setUint32(padded.length - 8, Math.floor(bitLength / 2 ** 32))
  const state = Uint32Array.from(INITIAL_STATE)
  const block = new Uint32Array(16)
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) block[i] = view.getUint32(offset + i * 4)
    compressInto(state, block, state)
  }
  const digest = new Uint8Array(32)
  const digestView = new DataView(digest.buffer)
  for (let i = 0; i < 8; i++) digestView.setUint32(i * 4, state[i] ?? 0)
  return digest
}

export function toHex(bytes: Uint8Array): string {
  let hex = ''
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
  return hex
}

/** Hex SHA-256 of a string's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return toHex(sha256(new TextEncoder().encode(text)))
}
