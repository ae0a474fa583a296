import type { FailureReason, Redemption } from './redeem-token.js'

/** reCAPTCHA Enterprise's TokenProperties.InvalidReason (API v1, which has no SITE_MISMATCH). */
export type InvalidReason = 'INVALID_REASON_UNSPECIFIED' | 'UNKNOWN_INVALID_REASON' | 'MALFORMED' | 'EXPIRED' | 'DUPE' | 'MISSING'

/** The event of a createAssessment call, as Google names its fields. */
export interface AssessmentEvent {
  token: string
  siteKey: string
  expectedAction: string
  userIpAddress: string
  userAgent: string
}

/** Google's Assessment, the fields a backend reads: the token's validity and facts, and the score. */
export interface Assessment {
  name: string
  event: AssessmentEvent
  riskAnalysis: { score: number; reasons: string[] }
  tokenProperties: { valid: boolean; invalidReason: InvalidReason; hostname: string; action: string; createTime?: string }
}

const invalidReasons: Record<FailureReason, InvalidReason> = {
  missing: 'MISSING',
  malformed: 'MALFORMED',
  // v1 has no SITE_MISMATCH (v1beta1 had): the token was issued for another siteKey than the event's.
  'site-mismatch': 'UNKNOWN_INVALID_REASON',
  expired: 'EXPIRED',
  duplicate: 'DUPE',
  // No reason names an address: the token is not valid for this visitor.
  'address-mismatch': 'UNKNOWN_INVALID_REASON',
}

/**
 * The Assessment of a redemption whose key was the site's (the caller answers a wrong key 403
 * first). A test secret's failure has no reason: its code says which (2x… invalid, 3x… duplicate).
 * As Google's, an expectedAction that is not the token's action does not make the token invalid:
 * the backend compares tokenProperties.action itself. A failure scores 0, so that a backend that
 * reads only the score refuses it.
 */
export function assessmentOf(name: string, event: AssessmentEvent, { answer, reason }: Redemption): Assessment {
  if (answer.success) {
    return {
      name,
      event,
      riskAnalysis: { score: answer.score ?? 0, reasons: [] },
      tokenProperties: {
        valid: true,
        invalidReason: 'INVALID_REASON_UNSPECIFIED',
        hostname: answer.hostname ?? '',
        action: answer.action ?? '',
        ...(answer.challenge_ts === null ? {} : { createTime: answer.challenge_ts }),
      },
    }
  }
  const invalidReason = reason === undefined ? (answer['error-codes'].includes('timeout-or-duplicate') ? 'DUPE' : 'MALFORMED') : invalidReasons[reason]
  return { name, event, riskAnalysis: { score: 0, reasons: [] }, tokenProperties: { valid: false, invalidReason, hostname: '', action: '' } }
}
