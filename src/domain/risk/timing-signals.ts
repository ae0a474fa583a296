import type { AnomalyLabel } from './anomalies.js'
import type { ScoringInput } from './scoring-input.js'

/**
 * Rounding slack for the claimed solve time: the client measures inside the interval the server
 * observes (it receives the challenge after issuing and sends before receipt), so an honest claim
 * never exceeds the observed time by more than timer rounding.
 */
export const SOLVE_TIME_SLACK_MS = 100

/** The proof of work as the server saw it: claimed against observed time, and who solved it. */
export function detectTimingAnomalies(input: ScoringInput): AnomalyLabel[] {
  const labels: AnomalyLabel[] = []
  if (input.submission.solveTimeMs > input.proofOfWork.observedSolveMs + SOLVE_TIME_SLACK_MS) {
    labels.push('solve_time_impossible')
  }
  if (!input.proofOfWork.isSameClient) labels.push('client_ip_changed')
  return labels
}
