import type { SiteSettings } from '../sites/site.js'

export type RiskAction = 'allow' | 'challenge' | 'block'

/**
 * The recommended action (DESIGN section 5): allow below challengeThreshold, challenge up to
 * blockThreshold, block from there. A client that has had the site's maximum of step-ups gets no
 * further one, nor does one whose challenge was already as hard as any can be (`canStepUp`
 * false: a step-up that is not harder would earn its credit for nothing): its score decides
 * between allow and block at the midpoint of the challenge band, so a score nearer the block
 * threshold is blocked.
 */
export function decideAction(
  riskScore: number,
  thresholds: Pick<SiteSettings, 'challengeThreshold' | 'blockThreshold' | 'maxStepUps'>,
  stepUps: number,
  canStepUp = true,
): RiskAction {
  if (riskScore < thresholds.challengeThreshold) return 'allow'
  if (riskScore >= thresholds.blockThreshold) return 'block'
  if (canStepUp && stepUps < thresholds.maxStepUps) return 'challenge'
  return riskScore < (thresholds.challengeThreshold + thresholds.blockThreshold) / 2 ? 'allow' : 'block'
}
