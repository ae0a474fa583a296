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
 * This solver's share of the nonce space, scanned one engine call (`chunk` suffixes) per step:
 * each step yields the attempts so far, and the scan returns the nonce that gives `difficulty`
 * leading zero bits (undefined past maxGroups). The engine only finds candidates; each is confirmed
 * here on the exact hash, which also covers difficulties above 32 where the engine checks the
 * first word alone. A worker runs it to the end at once (solveGroups); the page, between its own
 * work (solve-on-page.ts).
 */
export function* scanGroups(engine: SearchEngine, job: SolveJob, options: Omit<SolveOptions, 'onChunk'> = {}): Generator<SolveProgress, FoundNonce | undefined, void> {
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
      yield { attempts }
    }
  }
  return undefined
}

/** Scans this solver's share of the nonce space until a nonce gives `difficulty` leading zero bits (scanGroups, to its end). */
export function solveGroups(engine: SearchEngine, job: SolveJob, options: SolveOptions = {}): FoundNonce | undefined {
  const scan = scanGroups(engine, job, options)
  for (;;) {
    const step = scan.next()
    if (step.done === true) return step.value
    options.onChunk?.(step.value)
  }
}
