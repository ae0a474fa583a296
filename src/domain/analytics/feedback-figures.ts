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
  /** Fraudulent verifications whose score the current thresholds allow (below challengeThreshold). */
  missed: number
  /** Legitimate verifications whose score the current thresholds challenge or block (challengeThreshold or above). */
  falseAlarms: number
  buckets: FeedbackBucket[]
}

/**
 * The labels against the score buckets and against the site's current thresholds, not the actions
 * logged: an operator tuning the thresholds asks what they would do now. A score below
 * challengeThreshold is allowed (decideAction); anything from it up is challenged or blocked.
 */
export function buildFeedbackFigures(labeled: readonly LabeledScore[], challengeThreshold: number): FeedbackFigures {
  const bucketLabel = (score: number) => String(Math.floor(Math.min(Math.max(score, 0), 99) / 10) * 10)
  const countsOf = (wanted: LabeledScore['label']) => {
    const counts = new Map<string, number>()
    for (const { riskScore, label } of labeled) if (label === wanted) counts.set(bucketLabel(riskScore), (counts.get(bucketLabel(riskScore)) ?? 0) + 1)
    return buildScoreDistribution([...counts].map(([label, count]) => ({ label, count })))
  }
  const fraudulent = countsOf('fraudulent')
  const buckets = countsOf('legitimate').map(({ min, max, count }, index) => ({ min, max, legitimate: count, fraudulent: fraudulent[index]?.count ?? 0 }))
  const isAllowed = (score: number) => score < challengeThreshold
  return {
    legitimate: labeled.filter(({ label }) => label === 'legitimate').length,
    fraudulent: labeled.filter(({ label }) => label === 'fraudulent').length,
    missed: labeled.filter(({ label, riskScore }) => label === 'fraudulent' && isAllowed(riskScore)).length,
    falseAlarms: labeled.filter(({ label, riskScore }) => label === 'legitimate' && !isAllowed(riskScore)).length,
    buckets,
  }
}
