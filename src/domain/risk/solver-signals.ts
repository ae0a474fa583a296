import { assessSolveTime } from '../automation/assess-solve-time.js'
import type { AnomalyLabel } from './anomalies.js'
import type { ScoringInput } from './scoring-input.js'

/** Who solved the proof of work, and whether a browser could have done it that fast. */
export function detectSolverAnomalies(input: ScoringInput): AnomalyLabel[] {
  const { nonce, difficulty, observedSolveMs } = input.proofOfWork
  if (nonce === undefined) return []
  return assessSolveTime({ difficulty, nonce, claimedSolveTimeMs: input.submission.solveTimeMs, observedMs: observedSolveMs })
}
