import type { SiteSettings } from '../sites/site.js'

export type RiskAction = 'allow' | 'challenge' | 'block'

/**
 * The recommended action (DESIGN section 5): allow below challengeThreshold, challenge up to
 * blockThreshold, block from there. A client that has had the site's maximum of step-ups gets no
 * further one: its score decides between allow and block at the midpoint of the challenge band,
 * so a score nearer the block threshold is blocked.
 */
export function decideAction(
  riskScore: number,
  thresholds: Pick<SiteSettings, 'challengeThreshold' | 'blockThreshold' | 'maxStepUps'>,
  stepUps: number,
): RiskAction {
  if (riskScore < thresholds.challengeThreshold) return 'allow'
  if (riskScore >= thresholds.blockThreshold) return 'block'
  if (stepUps < thresholds.maxStepUps) return 'challenge'
  return riskScore < (thresholds.challengeThreshold + thresholds.blockThreshold) / 2 ? 'allow' : 'block'
}
