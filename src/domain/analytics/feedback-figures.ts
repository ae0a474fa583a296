import type { LabeledScoreCount } from '../../storage/sql/verification-label-repository.js'
import { buildScoreDistribution } from './score-distribution.js'

export interface FeedbackBucket {
  min: number
  max: number
  legitimate: number
  fraudulent: number
}

export interface FeedbackFigures {
  legitimate: number
  fraudulent: number
  /** Fraudulent verifications that were allowed (the action logged). */
  missed: number
  /** Legitimate verifications that were challenged or blocked (the action logged), the blocklist's aside. */
  falseAlarms: number
  buckets: FeedbackBucket[]
}

/**
 * The labels against what happened: the action each verification was logged with, not what the
 * current thresholds would decide (which step-ups also change: decideAction allows a score below
 * the challenge band's midpoint after the last step-up). The blocklist's rows, blocked unjudged,
 * are no verdict of the scoring and are no false alarm. The address allowlist's are allowed at
 * score 0 with no anomaly, unjudged, but the log marks them no other way: leaving out every such
 * row would hide the frauds nothing flagged, the misses that matter most, so they count. The
 * buckets (by the logged score) are what tuning reads: where the fraudulent scores sit against
 * the legitimate ones. The counts come grouped (countLabeledScores), their blocklist verdict
 * (an anomaly address_blocked or country_blocked, judgeForBlocklisted) already decided.
 */
export function buildFeedbackFigures(counts: readonly LabeledScoreCount[]): FeedbackFigures {
  const sumOf = (isCounted: (group: LabeledScoreCount) => boolean) => counts.reduce((sum, group) => (isCounted(group) ? sum + group.count : sum), 0)
  const bucketsOf = (wanted: LabeledScoreCount['label']) => {
    const perBucket = new Map<string, number>()
    for (const { bucketMin, label, count } of counts) if (label === wanted) perBucket.set(String(bucketMin), (perBucket.get(String(bucketMin)) ?? 0) + count)
    return buildScoreDistribution([...perBucket].map(([label, count]) => ({ label, count })))
  }
  const fraudulent = bucketsOf('fraudulent')
  const buckets = bucketsOf('legitimate').map(({ min, max, count }, index) => ({ min, max, legitimate: count, fraudulent: fraudulent[index]?.count ?? 0 }))
  return {
    legitimate: sumOf(({ label }) => label === 'legitimate'),
    fraudulent: sumOf(({ label }) => label === 'fraudulent'),
    missed: sumOf(({ label, action }) => label === 'fraudulent' && action === 'allow'),
    falseAlarms: sumOf(({ label, action, isBlocklisted }) => label === 'legitimate' && action !== 'allow' && !isBlocklisted),
    buckets,
  }
}
