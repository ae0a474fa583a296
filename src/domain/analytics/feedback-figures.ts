import type { LabeledScoreCount } from '../../storage/sql/verification-label-repository.js'
import type { ListDecision } from '../sites/list-decision.js'
import { buildScoreDistribution } from './score-distribution.js'

export interface FeedbackBucket {
  min: number
  max: number
  legitimate: number
  fraudulent: number
}

/** Labeled verifications of one kind, by label. */
export interface LabelCounts {
  legitimate: number
  fraudulent: number
}

export interface FeedbackFigures {
  legitimate: number
  fraudulent: number
  /** Fraudulent verifications the risk model allowed (the action logged); the lists' aside. */
  missed: number
  /** Legitimate verifications the risk model challenged or blocked (the action logged); the lists' aside. */
  falseAlarms: number
  /** The labeled verifications a site's list decided instead of the model, by list and label. */
  byList: Record<ListDecision, LabelCounts>
  buckets: FeedbackBucket[]
}

/**
 * The labels against what happened: the action each verification was logged with, not what the
 * current thresholds would decide (which step-ups also change: decideAction allows a score below
 * the challenge band's midpoint after the last step-up). A verification the site's own list
 * decided (the allowlist's, allowed at 0 unjudged; the blocklist's, blocked at 100) is no verdict
 * of the risk model: it is neither missed nor a false alarm, and is counted apart (byList), where
 * a fraudulent label on an allowlisted row says the allowlist let a fraud in. The allowlist's rows
 * logged before migration 030 cannot be told from the model's allows at 0 and count as the
 * model's. The buckets (by the logged score) are what tuning reads: where the fraudulent scores
 * sit against the legitimate ones. A list's rows are left out of them: their scores (0 for the
 * allowlist's, 100 for the blocklist's) were set by the list, not computed, and would show an
 * allowlisted fraud as a fraud the model scored 0 (they stay in legitimate, fraudulent and byList).
 * The counts come grouped (countLabeledScores), the list that
 * decided each already found.
 */
export function buildFeedbackFigures(counts: readonly LabeledScoreCount[]): FeedbackFigures {
  const sumOf = (isCounted: (group: LabeledScoreCount) => boolean) => counts.reduce((sum, group) => (isCounted(group) ? sum + group.count : sum), 0)
  const bucketsOf = (wanted: LabeledScoreCount['label']) => {
    const perBucket = new Map<string, number>()
    for (const { bucketMin, label, count, decidedBy } of counts) if (label === wanted && decidedBy === null) perBucket.set(String(bucketMin), (perBucket.get(String(bucketMin)) ?? 0) + count)
    return buildScoreDistribution([...perBucket].map(([label, count]) => ({ label, count })))
  }
  const labelsOf = (list: ListDecision): LabelCounts => ({
    legitimate: sumOf(({ label, decidedBy }) => decidedBy === list && label === 'legitimate'),
    fraudulent: sumOf(({ label, decidedBy }) => decidedBy === list && label === 'fraudulent'),
  })
  const fraudulent = bucketsOf('fraudulent')
  const buckets = bucketsOf('legitimate').map(({ min, max, count }, index) => ({ min, max, legitimate: count, fraudulent: fraudulent[index]?.count ?? 0 }))
  return {
    legitimate: sumOf(({ label }) => label === 'legitimate'),
    fraudulent: sumOf(({ label }) => label === 'fraudulent'),
    missed: sumOf(({ label, action, decidedBy }) => label === 'fraudulent' && action === 'allow' && decidedBy === null),
    falseAlarms: sumOf(({ label, action, decidedBy }) => label === 'legitimate' && action !== 'allow' && decidedBy === null),
    byList: { allowlist: labelsOf('allowlist'), blocklist: labelsOf('blocklist') },
    buckets,
  }
}
