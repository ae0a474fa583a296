import type { AnomalyLabel } from './anomalies.js'
import type { ScoringInput } from './scoring-input.js'

/** The client's recent history on the site, as the caller read it from the key-value store. */
export function detectHistoryAnomalies(input: ScoringInput): AnomalyLabel[] {
  return [...(input.history?.anomalies ?? [])]
}
