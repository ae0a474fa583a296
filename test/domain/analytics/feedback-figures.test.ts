import { describe, expect, it } from 'vitest'
import { buildFeedbackFigures } from '../../../src/domain/analytics/feedback-figures.js'
import type { LabeledScoreCount } from '../../../src/storage/sql/verification-label-repository.js'

/** One labeled verification, as countLabeledScores groups it (the bucket of its score, the list that decided it). */
const row = (
  label: LabeledScoreCount['label'],
  action: LabeledScoreCount['action'],
  riskScore: number,
  decidedBy: LabeledScoreCount['decidedBy'] = null,
): LabeledScoreCount => ({ label, action, bucketMin: Math.floor(Math.min(riskScore, 99) / 10) * 10, decidedBy, count: 1 })

describe('the feedback figures of the stats', () => {
  it('count what happened: a fraud allowed after the last step-up (a score inside the challenge band) is missed', () => {
    const figures = buildFeedbackFigures([row('fraudulent', 'allow', 45), row('fraudulent', 'challenge', 45), row('fraudulent', 'block', 90)])
    expect(figures).toMatchObject({ fraudulent: 3, missed: 1, falseAlarms: 0 })
  })

  it('count a person challenged or blocked as a false alarm, whatever the score', () => {
    const figures = buildFeedbackFigures([row('legitimate', 'challenge', 20), row('legitimate', 'block', 75), row('legitimate', 'allow', 60)])
    expect(figures).toMatchObject({ legitimate: 3, missed: 0, falseAlarms: 2 })
  })

  it("leave the lists' rows out of the missed and the false alarms, counted apart by list and not by score; a fraud nothing flagged (score 0) is missed", () => {
    const figures = buildFeedbackFigures([
      row('fraudulent', 'allow', 0),
      row('fraudulent', 'allow', 0, 'allowlist'),
      row('legitimate', 'allow', 0, 'allowlist'),
      row('legitimate', 'block', 100, 'blocklist'),
      row('legitimate', 'block', 100, 'blocklist'),
    ])
    expect(figures).toMatchObject({
      legitimate: 3,
      fraudulent: 2,
      missed: 1,
      falseAlarms: 0,
      byList: { allowlist: { legitimate: 1, fraudulent: 1 }, blocklist: { legitimate: 2, fraudulent: 0 } },
    })
    // Not in the score buckets: the lists set those scores (0, 100), the model computed none of them.
    expect(figures.buckets.find(({ min }) => min === 0)).toMatchObject({ fraudulent: 1, legitimate: 0 })
    expect(figures.buckets.find(({ min }) => min === 90)).toMatchObject({ fraudulent: 0, legitimate: 0 })
    expect(figures.buckets.reduce((sum, bucket) => sum + bucket.legitimate + bucket.fraudulent, 0)).toBe(1)
  })

  it('add up the counts of each group', () => {
    const figures = buildFeedbackFigures([{ ...row('fraudulent', 'allow', 12), count: 4 }, { ...row('legitimate', 'block', 95), count: 3 }])
    expect(figures).toMatchObject({ legitimate: 3, fraudulent: 4, missed: 4, falseAlarms: 3, byList: { allowlist: { legitimate: 0, fraudulent: 0 } } })
    expect(figures.buckets.find(({ min }) => min === 10)).toMatchObject({ fraudulent: 4, legitimate: 0 })
  })
})
