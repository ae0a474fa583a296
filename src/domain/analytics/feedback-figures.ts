import type { LabeledScore } from '../../storage/sql/verification-label-repository.js'
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

/** The labels a site's blocklist gives, at score 100 and unjudged (judge-submission.ts, judgeForBlocklisted). */
const BLOCKLIST_ANOMALIES: ReadonlySet<string> = new Set(['address_blocked', 'country_blocked'])

const isBlocklisted = ({ anomalies }: LabeledScore) => anomalies.some((anomaly) => BLOCKLIST_ANOMALIES.has(anomaly))

/**
 * The labels against what happened: the action each verification was logged with, not what the
 * current thresholds would decide (which step-ups also change: decideAction allows a score below
 * the challenge band's midpoint after the last step-up). The blocklist's rows, blocked unjudged,
 * are no verdict of the scoring and are no false alarm. The address allowlist's are allowed at
 * score 0 with no anomaly, unjudged, but the log marks them no other way: leaving out every such
 * row would hide the frauds nothing flagged, the misses that matter most, so they count. The
 * buckets (by the logged score) are what tuning reads: where the fraudulent scores sit against
 * the legitimate ones.
 */
export function buildFeedbackFigures(labeled: readonly LabeledScore[]): FeedbackFigures {
  const bucketLabel = (score: number) => String(Math.floor(Math.min(Math.max(score, 0), 99) / 10) * 10)
  const countsOf = (wanted: LabeledScore['label']) => {
    const counts = new Map<string, number>()
    for (const { riskScore, label } of labeled) if (label === wanted) counts.set(bucketLabel(riskScore), (counts.get(bucketLabel(riskScore)) ?? 0) + 1)
    return buildScoreDistribution([...counts].map(([label, count]) => ({ label, count })))
  }
  const fraudulent = countsOf('fraudulent')
  const buckets = countsOf('legitimate').map(({ min, max, count }, index) => ({ min, max, legitimate: count, fraudulent: fraudulent[index]?.count ?? 0 }))
  const isMissed = (row: LabeledScore) => row.label === 'fraudulent' && row.action === 'allow'
  const isFalseAlarm = (row: LabeledScore) => row.label === 'legitimate' && row.action !== 'allow' && !isBlocklisted(row)
  return {
    legitimate: labeled.filter(({ label }) => label === 'legitimate').length,
    fraudulent: labeled.filter(({ label }) => label === 'fraudulent').length,
    missed: labeled.filter(isMissed).length,
    falseAlarms: labeled.filter(isFalseAlarm).length,
    buckets,
  }
}
