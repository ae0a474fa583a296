import { createHash, randomBytes } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { assembleSolver } from '../../scripts/build-sdk.js'
import { createJsEngine } from '../../sdk/src/solver/js-engine.js'
import {
  computeMidstate, hasLeadingZeroBits, LANES, nonceOf, prefixOf, prefixWordsOf, SUFFIX_COUNT, thresholdOf,
} from '../../sdk/src/solver/nonce-layout.js'
import type { SearchEngine } from '../../sdk/src/solver/search-engine.js'
import { INITIAL_STATE, ROUND_CONSTANTS, sha256, sha256Hex } from '../../sdk/src/solver/sha256.js'
import { solveGroups } from '../../sdk/src/solver/solve-groups.js'
import { compileSolver, createWasmEngine } from '../../sdk/src/solver/wasm-engine.js'
import { countLeadingZeroBits } from '../../src/domain/proof-of-work/count-leading-zero-bits.js'

function nodeSha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}

function randomChallenge(): string {
  return randomBytes(32).toString('hex')
}

/** Every (suffix, lane) of one group whose hash has >= difficulty zero bits, by Node's crypto. */
function expectedCandidates(challenge: string, group: number, difficulty: number, suffixes: number): string[] {
  const found: string[] = []
  for (let suffix = 0; suffix < suffixes; suffix++) {
    for (let lane = 0; lane < LANES; lane++) {
      const nonce = nonceOf(prefixOf(group, lane), suffix)
      if (countLeadingZeroBits(nodeSha256(challenge + nonce)) >= difficulty) found.push(nonce)
    }
  }
  return found
}

/** The same scan through an engine: it reports suffixes; lanes are told apart by the exact hash. */
function engineCandidates(engine: SearchEngine, challenge: string, group: number, difficulty: number, suffixes: number): string[] {
  const prefixes = Array.from({ length: LANES }, (_, lane) => prefixOf(group, lane))
  engine.load(computeMidstate(challenge), prefixes.map(prefixWordsOf))
  const found: string[] = []
  let start = 0
  for (;;) {
    const hit = engine.search(start, suffixes, thresholdOf(difficulty))
    if (hit < 0) return found
    for (const prefix of prefixes) {
      const nonce = nonceOf(prefix, hit)
      if (countLeadingZeroBits(nodeSha256(challenge + nonce)) >= difficulty) found.push(nonce)
    }
    start = hit + 1
  }
}

let wasmModule: object

beforeAll(async () => {
  wasmModule = await compileSolver(await assembleSolver())
})

describe('SHA-256 in JavaScript', () => {
  it('matches the FIPS 180-2 examples', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'))
      .toBe('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1')
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  })

  it('matches node:crypto at every padding boundary and on multi-block input', () => {
    for (const length of [1, 54, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000]) {
      const bytes = randomBytes(length)
      expect(Buffer.from(sha256(bytes)).toString('hex'), `length ${length}`)
        .toBe(createHash('sha256').update(bytes).digest('hex'))
    }
  })
  it('computes its constants exactly, with room for any engine\'s rounding of roots', () => {
    // The published first and last words (FIPS 180-4, 4.2.2 and 5.3.3); the hashes above check the rest.
    expect([ROUND_CONSTANTS[0], ROUND_CONSTANTS[63], INITIAL_STATE[0], INITIAL_STATE[7]]).toEqual([0x428a2f98, 0xc67178f2, 0x6a09e667, 0x5be0cd19])
    expect(ROUND_CONSTANTS).toHaveLength(64)
    expect(INITIAL_STATE).toHaveLength(8)
    // A root off by a hundred units in its last place (engines' Math.cbrt is off by one or two)
    // moves the scaled fraction by under 0.001: every constant lies farther than that from the
    // boundary where truncation tips over.
    const primes = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173, 179, 181, 191, 193, 197, 199, 211, 223, 227, 229, 233, 239, 241, 251, 257, 263, 269, 271, 277, 281, 283, 293, 307, 311]
    const roots = [...primes.map((prime) => Math.cbrt(prime)), ...primes.slice(0, 8).map((prime) => Math.sqrt(prime))]
    for (const root of roots) {
      const error = 100 * Number.EPSILON * root * 2 ** 32
      const scaled = (root - Math.floor(root)) * 2 ** 32
      expect(Math.min(scaled % 1, 1 - (scaled % 1))).toBeGreaterThan(error)
    }
  })
})

describe('nonce layout', () => {
  it('produces 16-digit nonces without a leading zero and below 2^53', () => {
    for (const [group, lane, suffix] of [[0, 0, 0], [5, 3, 7], [199_999_999_999, 3, 9_999]] as const) {
      const nonce = nonceOf(prefixOf(group, lane), suffix)
      expect(nonce).toMatch(/^[1-9]\d{15}$/)
      expect(BigInt(nonce) < 2n ** 53n).toBe(true)
    }
  })

  it('gives every worker its own nonces', () => {
    const workers = 3
    const seen = new Set<number>()
    for (let worker = 0; worker < workers; worker++) {
      for (let round = 0; round < 4; round++) {
        for (let lane = 0; lane < LANES; lane++) seen.add(prefixOf(worker + round * workers, lane))
      }
    }
    expect(seen.size).toBe(workers * 4 * LANES)
  })

  it('counts leading zero bits across words', () => {
    expect(hasLeadingZeroBits([0x0000ffff, 0], 16)).toBe(true)
    expect(hasLeadingZeroBits([0x0000ffff, 0], 17)).toBe(false)
    expect(hasLeadingZeroBits([0, 0x0fffffff], 36)).toBe(true)
    expect(hasLeadingZeroBits([0, 0x1fffffff], 36)).toBe(false)
    expect(hasLeadingZeroBits([0x80000000], 0)).toBe(true)
  })
})

describe.each([
  { name: 'WebAssembly SIMD', create: () => createWasmEngine(wasmModule), suffixes: SUFFIX_COUNT },
  { name: 'JavaScript fallback', create: () => Promise.resolve(createJsEngine()), suffixes: 2_000 },
])('the $name engine', ({ create, suffixes }) => {
  it('finds exactly the nonces node:crypto finds over a whole lane group', async () => {
    const engine = await create()
    for (const difficulty of [6, 10]) {
      const challenge = randomChallenge()
      const group = Math.floor(Math.random() * 1_000_000)
      const expected = expectedCandidates(challenge, group, difficulty, suffixes)
      expect(expected.length).toBeGreaterThan(0)
      expect(engineCandidates(engine, challenge, group, difficulty, suffixes)).toEqual(expected)
    }
  })

  it('solves random challenges with nonces that node:crypto accepts', async () => {
    const engine = await create()
    for (let i = 0; i < 5; i++) {
      const challenge = randomChallenge()
      const difficulty = 12
      const found = solveGroups(engine, { challenge, difficulty, firstGroup: i, groupStep: 3 })
      expect(found).toBeDefined()
      expect(found?.nonce).toMatch(/^[1-9]\d{15}$/)
      expect(countLeadingZeroBits(nodeSha256(challenge + (found?.nonce ?? '')))).toBeGreaterThanOrEqual(difficulty)
    }
  })

  it('returns the known answer for a fixed challenge', async () => {
    // Pinned from a scan of the documented order with node:crypto (sha256('tollgate') as challenge).
    const challenge = nodeSha256('tollgate').toString('hex')
    const found = solveGroups(await create(), { challenge, difficulty: 14, firstGroup: 0, groupStep: 1 })
    expect(found?.nonce).toBe(KNOWN_NONCE)
    expect(countLeadingZeroBits(nodeSha256(challenge + KNOWN_NONCE))).toBeGreaterThanOrEqual(14)
  })
})

describe('solveGroups', () => {
  it('answers difficulty 0 with the first nonce', async () => {
    const found = solveGroups(await createWasmEngine(wasmModule), { challenge: randomChallenge(), difficulty: 0, firstGroup: 2, groupStep: 4 })
    expect(found?.nonce).toBe(nonceOf(prefixOf(2, 0), 0))
  })

  it('gives up after maxGroups when the difficulty is out of reach', async () => {
    const found = solveGroups(await createWasmEngine(wasmModule), { challenge: randomChallenge(), difficulty: 40, firstGroup: 0, groupStep: 1 }, { maxGroups: 1 })
    expect(found).toBeUndefined()
  })

  it('rejects a challenge that is not 64 lowercase hex characters', async () => {
    const engine = await createWasmEngine(wasmModule)
    expect(() => solveGroups(engine, { challenge: 'ABC', difficulty: 4, firstGroup: 0, groupStep: 1 })).toThrow(RangeError)
  })
})

const KNOWN_NONCE = '1000000000023285'
