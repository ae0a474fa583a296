import type { VerificationAction } from '../api/types.js'

/**
 * One look per action across the chart, the totals and the badges. The colours pass 4.5:1 on
 * white, and each chart line also has its own dash pattern, so colour is never the only cue.
 */
export const actionStyles: Record<VerificationAction, { label: string; color: string; dash: number[] }> = {
  allow: { label: 'Allowed', color: '#15803d', dash: [] },
  challenge: { label: 'Challenged', color: '#b45309', dash: [8, 4] },
  block: { label: 'Blocked', color: '#b91c1c', dash: [2, 3] },
  rejected: { label: 'Rejected', color: '#4b5563', dash: [12, 3, 2, 3] },
}
