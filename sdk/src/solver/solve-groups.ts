import {
  computeMidstate, hashNonce, hasLeadingZeroBits, LANES, nonceOf, prefixOf, prefixWordsOf, SUFFIX_COUNT, thresholdOf,
} from './nonce-layout.js'
import type { SearchEngine } from './search-engine.js'

export interface SolveJob {
  challenge: string
  difficulty: number
  /** This solver scans lane groups firstGroup, firstGroup + groupStep, ... (one per worker). */
  firstGroup: number
  groupStep: number
}

export interface SolveProgress {
  attempts: number
}

export interface SolveOptions {
  /** Stop after this many groups (tests); by default the scan goes on until it finds an answer. */
  maxGroups?: number
  /** Suffixes per engine call: small enough to report progress often, large enough to amortise the call. */
  chunk?: number
  onChunk?: (progress: SolveProgress) => void
}

export interface FoundNonce {
  nonce: string
  attempts: number
}

/**
 * Scans this solver's share of the nonce space until a nonce gives `difficulty` leading zero
 * bits. The engine only finds candidates; each is confirmed here on the exact hash, which also
 * covers difficulties above 32 where the engine checks the first word alone.
 */
export function solveGroups(engine: SearchEngine, job: SolveJob, options: SolveOptions = {}): FoundNonce | undefined {
  const { challenge, difficulty, firstGroup, groupStep } = job
  if (difficulty <= 0) return { nonce: nonceOf(prefixOf(firstGroup, 0), 0), attempts: 1 }
  const midstate = computeMidstate(challenge)
  const threshold = thresholdOf(difficulty)
  const chunk = options.chunk ?? 2_500
  let attempts = 0
  for (let round = 0; options.maxGroups === undefined || round < options.maxGroups; round++) {
    const group = firstGroup + round * groupStep
    const prefixes = Array.from({ length: LANES }, (_, lane) => prefixOf(group, lane))
    engine.load(midstate, prefixes.map(prefixWordsOf))
    let start = 0
    while (start < SUFFIX_COUNT) {
      const end = Math.min(start + chunk, SUFFIX_COUNT)
      const hit = engine.search(start, end, threshold)
      if (hit < 0) {
        attempts += (end - start) * LANES
        start = end
      } else {
        attempts += (hit - start + 1) * LANES
        for (const prefix of prefixes) {
          if (hasLeadingZeroBits(hashNonce(midstate, prefix, hit), difficulty)) return { nonce: nonceOf(prefix, hit), attempts }
        }
        start = hit + 1
      }
      options.onChunk?.({ attempts })
    }
  }
  return undefined
}
