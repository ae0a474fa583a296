import { isChallengeText } from './challenge-format.js'
import { compressBlock, INITIAL_STATE } from './sha256.js'

/**
 * How nonces are laid out so that one attempt costs one SHA-256 compression and the SIMD solver
 * can hash four nonces per instruction.
 *
 * The message is `challenge + nonce`. The challenge is 64 ASCII characters: exactly the first
 * block, whose compression (the midstate) is computed once per challenge. Every nonce is 16
 * decimal digits: a 12-digit prefix followed by a 4-digit suffix. The second block is then
 * always the same shape: words 0-2 hold the prefix, word 3 the suffix, word 4 the padding bit
 * and word 15 the message length (80 bytes = 640 bits); every other word is zero.
 *
 * The four SIMD lanes take four neighbouring prefixes and share the suffix, so within one
 * search call the prefix words are constant (the rounds that only read them are computed once
 * per call) and only word 3 changes per attempt. Nonces stay below 2^53 (the largest prefix
 * is 899999999999) and never start with a zero, as the protocol requires.
 */

export const LANES = 4
export const SUFFIX_COUNT = 10_000
export const PREFIX_WORDS = 3
const FIRST_PREFIX = 100_000_000_000
const LAST_PREFIX = 899_999_999_999
/** How many lane groups exist; group g covers prefixes FIRST_PREFIX + 4g .. + 4g + 3. */
export const GROUP_COUNT = Math.floor((LAST_PREFIX - FIRST_PREFIX + 1) / LANES)
const MESSAGE_BITS = (64 + 16) * 8

/** The SHA-256 state after the challenge block. */
export function computeMidstate(challenge: string): Uint32Array {
  if (!isChallengeText(challenge)) throw new RangeError('the challenge must be 64 lowercase hex characters')
  const block = new Uint32Array(16)
  for (let i = 0; i < 16; i++) {
    let word = 0
    for (let j = 0; j < 4; j++) word = (word << 8) | challenge.charCodeAt(i * 4 + j)
    block[i] = word >>> 0
  }
  return compressBlock(INITIAL_STATE, block)
}

export function prefixOf(group: number, lane: number): number {
  return FIRST_PREFIX + ((group % GROUP_COUNT) * LANES) + lane
}

export function nonceOf(prefix: number, suffix: number): string {
  return `${prefix}${String(suffix).padStart(4, '0')}`
}

function packAscii(text: string, offset: number): number {
  let word = 0
  for (let j = 0; j < 4; j++) word = (word << 8) | text.charCodeAt(offset + j)
  return word >>> 0
}

/** The three big-endian words of a 12-digit prefix. */
export function prefixWordsOf(prefix: number): [number, number, number] {
  const digits = String(prefix)
  return [packAscii(digits, 0), packAscii(digits, 4), packAscii(digits, 8)]
}

/** Word 3 of the nonce block: the suffix as 4 ASCII digits. */
export function suffixWordOf(suffix: number): number {
  return packAscii(String(suffix).padStart(4, '0'), 0)
}

/** The whole padded second block for one nonce. */
export function nonceBlockOf(prefix: number, suffix: number): Uint32Array {
  const [w0, w1, w2] = prefixWordsOf(prefix)
  const block = new Uint32Array(16)
  block.set([w0, w1, w2, suffixWordOf(suffix), 0x80000000])
  block[15] = MESSAGE_BITS
  return block
}

/**
 * The candidate test both solvers share: a lane is a candidate when its first hash word is
 * below this threshold. For difficulty >= 32 the first word must be zero and the exact check
 * happens afterwards in `hasLeadingZeroBits`.
 */
export function thresholdOf(difficulty: number): number {
  return difficulty >= 32 ? 1 : 2 ** (32 - difficulty)
}

export function hasLeadingZeroBits(hash: ArrayLike<number>, difficulty: number): boolean {
  let remaining = difficulty
  for (let i = 0; i < 8 && remaining > 0; i++) {
    const word = (hash[i] ?? 0) >>> 0
    if (remaining >= 32) {
      if (word !== 0) return false
      remaining -= 32
    } else {
      return word >>> (32 - remaining) === 0
    }
  }
  return true
}

export function hashNonce(midstate: ArrayLike<number>, prefix: number, suffix: number): Uint32Array {
  return compressBlock(midstate, nonceBlockOf(prefix, suffix))
}
