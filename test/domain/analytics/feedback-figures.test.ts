import { describe, expect, it } from 'vitest'
import { buildFeedbackFigures } from '../../../src/domain/analytics/feedback-figures.js'
import type { LabeledScoreCount } from '../../../src/storage/sql/verification-label-repository.js'

/** One labeled verification, as countLabeledScores groups it (the bucket of its score). */
const row = (label: LabeledScoreCount['label'], action: LabeledScoreCount['action'], riskScore: number, anomalies: string[] = ['headless_browser']): LabeledScoreCount => ({
  label,
  action,
  bucketMin: Math.floor(Math.min(riskScore, 99) / 10) * 10,
  isBlocklisted: anomalies.includes('address_blocked') || anomalies.includes('country_blocked'),
  count: 1,
})

describe('the feedback figures of the stats', () => {
  it('count what happened: a fraud allowed after the last step-up (a score inside the challenge band) is missed', () => {
    const figures = buildFeedbackFigures([row('fraudulent', 'allow', 45), row('fraudulent', 'challenge', 45), row('fraudulent', 'block', 90)])
    expect(figures).toMatchObject({ fraudulent: 3, missed: 1, falseAlarms: 0 })
  })

  it('count a person challenged or blocked as a false alarm, whatever the score', () => {
    const figures = buildFeedbackFigures([row('legitimate', 'challenge', 20), row('legitimate', 'block', 75), row('legitimate', 'allow', 60)])
    expect(figures).toMatchObject({ legitimate: 3, missed: 0, falseAlarms: 2 })
  })

  it("leave the blocklist's rows out of the false alarms; a fraud nothing flagged (score 0) is missed", () => {
    const figures = buildFeedbackFigures([
      row('fraudulent', 'allow', 0, []),
      row('legitimate', 'block', 100, ['address_blocked']),
      row('legitimate', 'block', 100, ['country_blocked']),
    ])
    expect(figures).toMatchObject({ legitimate: 2, fraudulent: 1, missed: 1, falseAlarms: 0 })
    // Still counted by score, where tuning reads them.
    expect(figures.buckets.find(({ min }) => min === 0)).toMatchObject({ fraudulent: 1 })
    expect(figures.buckets.find(({ min }) => min === 90)).toMatchObject({ legitimate: 2 })
  })

  it('add up the counts of each group', () => {
    const figures = buildFeedbackFigures([{ ...row('fraudulent', 'allow', 12), count: 4 }, { ...row('legitimate', 'block', 95), count: 3 }])
    expect(figures).toMatchObject({ legitimate: 3, fraudulent: 4, missed: 4, falseAlarms: 3 })
    expect(figures.buckets.find(({ min }) => min === 10)).toMatchObject({ fraudulent: 4, legitimate: 0 })
  })
})
