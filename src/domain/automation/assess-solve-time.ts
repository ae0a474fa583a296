import type { AnomalyLabel } from '../risk/anomalies.js'

/**
 * The SDK's nonce layout (sdk/src/solver/nonce-layout.ts): 16 digits, a 12-digit prefix from
 * 100000000000 and a 4-digit suffix. Prefixes come in lane groups of 4; worker w of n scans groups
 * w, w + n, w + 2n, ... and each group costs LANES * SUFFIXES attempts. So the nonce tells how many
 * groups the finding worker scanned before it, whatever the luck.
 */
const SDK_NONCE = /^([1-8]\d{11})(\d{4})$/
const FIRST_PREFIX = 100_000_000_000
const LANES = 4
const SUFFIXES = 10_000
/** The SDK starts at most this many workers (MAX_WORKERS in sdk/src/solve-in-workers.ts). */
const SDK_MAX_WORKERS = 8

/**
 * Hashes per second one browser worker can plausibly do, with generous headroom: the SDK's SIMD
 * WebAssembly solver does a few tens of millions per core on current desktop CPUs (measured
 * figures in docs/risk.md); native code with SHA extensions does about a billion, GPUs far more.
 */
export const MAX_BROWSER_HASHES_PER_WORKER_PER_SECOND = 100_000_000
export const MAX_BROWSER_HASHES_PER_SECOND = MAX_BROWSER_HASHES_PER_WORKER_PER_SECOND * SDK_MAX_WORKERS

/** How unlikely a lucky fast solve must be before it counts as a faster solver: one in ten thousand. */
const LUCK_PROBABILITY = 1e-4

export interface SolveTimeEvidence {
  difficulty: number
  nonce: string
  /** solveTimeMs as the client claimed it. */
  claimedSolveTimeMs: number
  /** Between issuing the challenge and receiving the solution, by the server's clock. */
  observedMs: number
}

/** Groups the finding worker scanned up to and including the answer, when the nonce is in the SDK layout. */
function sdkGroupsScanned(nonce: string): number | undefined {
  const match = SDK_NONCE.exec(nonce)
  if (match === null) return undefined
  const group = Math.floor((Number(match[1]) - FIRST_PREFIX) / LANES)
  // Worker w found it in round floor(group / n); with n <= SDK_MAX_WORKERS it scanned at least this many.
  return Math.floor(group / SDK_MAX_WORKERS) + 1
}

/**
 * Proof-of-work plausibility: the work cannot have been done faster than a browser can hash
 * (a claim longer than the server observed is solve_time_impossible, in timing-signals.ts):
 * - in the SDK layout the nonce itself proves the finding worker's share of the work, so the
 *   check needs no luck allowance;
 * - any other nonce came from other software (foreign_solver), and only the expected work is
 *   known, so it counts as too fast only when a browser at full speed would have needed luck of
 *   one in ten thousand.
 * The time used is the shorter of the claimed and the observed one: a client that lies upwards
 * is caught by solve_time_impossible, and the observed time bounds any claim.
 */
export function assessSolveTime(evidence: SolveTimeEvidence): AnomalyLabel[] {
  const anomalies: AnomalyLabel[] = []
  const seconds = Math.max(0, Math.min(evidence.claimedSolveTimeMs, evidence.observedMs)) / 1000
  const groups = sdkGroupsScanned(evidence.nonce)
  if (groups === undefined) {
    anomalies.push('foreign_solver')
    const expectedAttempts = 2 ** evidence.difficulty
    if (MAX_BROWSER_HASHES_PER_SECOND * seconds < LUCK_PROBABILITY * expectedAttempts) anomalies.push('solve_too_fast')
  } else {
    // The last group may have ended early at the answer, so only the groups before it count in full.
    const provenAttempts = (groups - 1) * LANES * SUFFIXES
    if (provenAttempts > MAX_BROWSER_HASHES_PER_WORKER_PER_SECOND * seconds) anomalies.push('solve_too_fast')
  }
  return anomalies
}
