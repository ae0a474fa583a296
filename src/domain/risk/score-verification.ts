import { anomalyLabels, anomalyVocabulary, MAX_RISK_SCORE, STEP_UP_CREDIT, type AnomalyLabel } from './anomalies.js'
import { detectAutomationAnomalies } from './automation-signals.js'
import { detectBehaviorAnomalies } from './behavior-signals.js'
import { detectFingerprintAnomalies } from './fingerprint-signals.js'
import { detectHeaderAnomalies } from './header-signals.js'
import { detectHistoryAnomalies } from './history-signals.js'
import { detectNetworkAnomalies } from './network-signals.js'
import type { ScoringInput } from './scoring-input.js'
import { detectSolverAnomalies } from './solver-signals.js'
import { detectTimingAnomalies } from './timing-signals.js'

export interface RiskAssessment {
  /** Integer 0-100; higher is riskier. */
  riskScore: number
  /** The labels found, each once, in vocabulary order. */
  anomalies: AnomalyLabel[]
}

/** One group of related signals; a new group is one more entry here. */
export type SignalGroup = (input: ScoringInput) => AnomalyLabel[]

export const signalGroups: readonly SignalGroup[] = [
  detectHeaderAnomalies,
  detectFingerprintAnomalies,
  detectBehaviorAnomalies,
  detectTimingAnomalies,
  detectNetworkAnomalies,
  detectAutomationAnomalies,
  detectSolverAnomalies,
  detectHistoryAnomalies,
]

/**
 * The risk score: the sum of the weights of the labels found, capped at 100, minus
 * STEP_UP_CREDIT for every step-up already solved, floored at 0; no credit when the sum reaches
 * stepUpCreditBelow (the site's block threshold). So a score can be recomputed from the
 * verification log's anomalies and step_ups columns and the block threshold the site had then
 * (which the log does not keep: a threshold changed since may give another result).
 */
export function scoreVerification(input: ScoringInput): RiskAssessment {
  const found = new Set<AnomalyLabel>()
  for (const group of signalGroups) for (const label of group(input)) found.add(label)
  const anomalies = anomalyLabels.filter((label) => found.has(label))
  return { riskScore: scoreOf(anomalies, input.stepUps, input.stepUpCreditBelow), anomalies }
}

export function scoreOf(anomalies: readonly AnomalyLabel[], stepUps: number, stepUpCreditBelow = Number.POSITIVE_INFINITY): number {
  const total = Math.min(MAX_RISK_SCORE, anomalies.reduce((sum, label) => sum + anomalyVocabulary[label].weight, 0))
  if (total >= stepUpCreditBelow) return total
  return Math.max(0, total - STEP_UP_CREDIT * stepUps)
}
