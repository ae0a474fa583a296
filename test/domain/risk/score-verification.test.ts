import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { anomalyLabels, anomalyVocabulary } from '../../../src/domain/risk/anomalies.js'
import { decideAction } from '../../../src/domain/risk/decide-action.js'
import { scoreOf, scoreVerification } from '../../../src/domain/risk/score-verification.js'
import { defaultSiteSettings } from '../../../src/domain/sites/site.js'
import { humanInput } from './scoring-fixtures.js'

describe('the anomaly vocabulary', () => {
  it('gives every label a positive integer weight and a reason', () => {
    for (const label of anomalyLabels) {
      expect(label).toMatch(/^[a-z]+(_[a-z]+)*$/)
      expect(Number.isInteger(anomalyVocabulary[label].weight) && anomalyVocabulary[label].weight > 0).toBe(true)
      expect(anomalyVocabulary[label].reason.length).toBeGreaterThan(20)
    }
  })

  it('is documented in docs/risk.md, every label with its weight', async () => {
    const documentation = await readFile(new URL('../../../docs/risk.md', import.meta.url), 'utf8')
    for (const label of anomalyLabels) {
      expect(documentation, label).toContain(`| \`${label}\` | ${anomalyVocabulary[label].weight} |`)
    }
  })

  it('includes the labels the spec names', () => {
    expect(anomalyLabels).toEqual(expect.arrayContaining(['datacenter_ip', 'vpn_detected', 'missing_origin']))
  })
})

describe('scoreVerification', () => {
  it('scores a person 0 with no anomalies', () => {
    expect(scoreVerification(humanInput())).toEqual({ riskScore: 0, anomalies: [] })
  })

  it('scores a moderate request rate 20 (allow) and a high one 40 (challenge)', () => {
    const settings = defaultSiteSettings
    const moderate = scoreVerification({ ...humanInput(), history: { anomalies: ['high_request_rate'] } })
    expect(moderate).toEqual({ riskScore: 20, anomalies: ['high_request_rate'] })
    expect(decideAction(moderate.riskScore, settings, 0)).toBe('allow')
    const high = scoreVerification({ ...humanInput(), history: { anomalies: ['high_request_rate', 'very_high_request_rate'] } })
    expect(high).toEqual({ riskScore: 40, anomalies: ['high_request_rate', 'very_high_request_rate'] })
    expect(decideAction(high.riskScore, settings, 0)).toBe('challenge')
  })

  it('sums the weights of the labels found', () => {
    const input = humanInput()
    const result = scoreVerification({ ...input, request: { headers: { ...input.request.headers, 'accept-language': undefined }, hasOrigin: false } })
    // Listed in vocabulary order, whatever order the groups found them in.
    expect(result).toEqual({ riskScore: 15 + 10, anomalies: ['missing_origin', 'missing_accept_language'] })
  })

  it('caps the sum at 100: a scripted HTTP client', () => {
    const input = humanInput()
    const result = scoreVerification({
      ...input,
      submission: { solveTimeMs: 0, fingerprint: {}, behaviorData: {} },
      // Sent to an HTTPS service, where a browser would have sent fetch metadata.
      request: { headers: { 'user-agent': 'curl/8.5.0' }, hasOrigin: false, isTrustworthyDestination: true },
    })
    expect(result.riskScore).toBe(100)
    expect(result.anomalies).toEqual([
      'missing_origin', 'bot_user_agent', 'missing_accept_language', 'missing_fetch_metadata', 'incomplete_fingerprint', 'canvas_missing', 'webgl_missing', 'no_interaction',
    ])
  })

  it('takes 15 points off per solved step-up, never below 0', () => {
    const human = humanInput()
    const input = { ...human, request: { headers: { ...human.request.headers, 'accept-language': undefined }, hasOrigin: false } }
    expect(scoreVerification({ ...input, stepUps: 1 }).riskScore).toBe(25 - 15)
    expect(scoreVerification({ ...input, stepUps: 2 }).riskScore).toBe(0)
    expect(scoreOf(['bot_user_agent', 'webdriver_detected'], 1)).toBe(100 - 15)
    // Labels that reach the block threshold on their own earn no credit for the rounds solved.
    expect(scoreOf(['webdriver_detected'], 2, 70)).toBe(70)
    expect(scoreOf(['bot_user_agent', 'webdriver_detected'], 1, 70)).toBe(100)
    // Below it the credit holds: 70 under a block threshold of 71 is 40 after two rounds.
    const band = ['webdriver_detected'] as const
    expect(scoreOf(band, 2, 71)).toBe(70 - 30)
  })
})

describe('decideAction', () => {
  const settings = { ...defaultSiteSettings, challengeThreshold: 40, blockThreshold: 70, maxStepUps: 2 }
  it.each([
    [0, 0, 'allow'],
    [39, 0, 'allow'],
    [40, 0, 'challenge'],
    [69, 1, 'challenge'],
    [70, 0, 'block'],
    [100, 0, 'block'],
    // After the maximum of step-ups the challenge band splits at its midpoint (55).
    [54, 2, 'allow'],
    [55, 2, 'block'],
  ])('score %i after %i step-ups is %s', (score, stepUps, action) => {
    expect(decideAction(score, settings, stepUps)).toBe(action)
  })

  it('never asks for a step-up when the site allows none', () => {
    expect(decideAction(45, { ...settings, maxStepUps: 0 }, 0)).toBe('allow')
    expect(decideAction(60, { ...settings, maxStepUps: 0 }, 0)).toBe('block')
  })

  it('never asks for a step-up when no harder challenge can follow: decided as after the last step-up', () => {
    expect(decideAction(45, settings, 0, false)).toBe('allow')
    expect(decideAction(60, settings, 0, false)).toBe('block')
    expect(decideAction(30, settings, 0, false)).toBe('allow')
    expect(decideAction(80, settings, 0, false)).toBe('block')
  })
})
