import { LANES, PREFIX_WORDS, suffixWordOf } from './nonce-layout.js'
import { compressInto } from './sha256.js'
import type { SearchEngine } from './search-engine.js'

/** The fallback for browsers without WebAssembly SIMD, or pages whose CSP forbids compiling it. */
export function createJsEngine(): SearchEngine {
  let midstate = new Uint32Array(8)
  const hash = new Uint32Array(8)
  const blocks: Uint32Array[] = []
  for (let lane = 0; lane < LANES; lane++) {
    const block = new Uint32Array(16)
    block[4] = 0x80000000
    block[15] = (64 + 16) * 8
    blocks.push(block)
  }
  return {
    kind: 'js',
    load(state, lanePrefixWords) {
      midstate = Uint32Array.from(state)
      for (let lane = 0; lane < LANES; lane++) {
        const words = lanePrefixWords[lane] ?? []
        for (let i = 0; i < PREFIX_WORDS; i++) (blocks[lane] as Uint32Array)[i] = words[i] ?? 0
      }
    },
    search(start, end, threshold) {
      for (let suffix = start; suffix < end; suffix++) {
        const word = suffixWordOf(suffix)
        for (const block of blocks) {
          block[3] = word
          if ((compressInto(midstate, block, hash)[0] ?? 0) < threshold) return suffix
        }
      }
      return -1
    },
  }
}
