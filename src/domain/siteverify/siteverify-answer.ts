import type { TokenClaims } from '../token/token.js'

/** The error codes of DESIGN section 6, as Turnstile spells them. */
export type SiteverifyErrorCode =
  | 'missing-input-secret'
  | 'invalid-input-secret'
  | 'missing-input-response'
  | 'invalid-input-response'
  | 'timeout-or-duplicate'
  | 'bad-request'
  | 'internal-error'

/**
 * The Siteverify answer: Turnstile's fields plus riskScore, score (reCAPTCHA's orientation:
 * 1.0 is very likely a human), anomalies and countryCode. Every field is always present; a
 * failure carries null where the token's facts would be, so that nothing about a token leaks to
 * a caller that could not redeem it.
 *
 * `action` is the recommended action (DESIGN section 6) unless the page named its own action
 * ('login'): then it is that name, as Turnstile and reCAPTCHA v3 answer it, because their
 * backends compare it with the action they expect, and a drop-in must pass that check. The
 * recommendation is in `recommendedAction` either way.
 */
export interface SiteverifyAnswer {
  success: boolean
  challenge_ts: string | null
  hostname: string | null
  'error-codes': SiteverifyErrorCode[]
  action: string | null
  recommendedAction: TokenClaims['action'] | null
  /** The page's own data (Turnstile's cData), when it gave any. */
  cdata: string | null
  riskScore: number | null
  score: number | null
  anomalies: string[]
  countryCode: string | null
  /**
   * Whether the remoteip the call named is in the address group (an IPv4 address, an IPv6 /64)
   * that earned the token, for a site that checks tokens' addresses (address-binding.ts); null
   * when there is nothing to compare (no remoteip, a token without the claim, another family)
   * and in a failure.
   */
  remoteipMatch: boolean | null
  /**
   * Turnstile's metadata: the device's ephemeral id on the site (ephemeralIdOf), when the token has
   * one; and, in a success only, the verification's id (the token's challenge), which the feedback
   * call (POST /api/v1/siteverify/feedback) and the dashboard's log name it by; null for test
   * secrets. Only in a success: nothing of a token in a failure. (The vendors' paths answer a
   * failure without any of these fields: vendor-answers.ts.)
   */
  metadata: { ephemeral_id: string | null; verification_id?: string | null }
}

export function answerSuccess(
  claims: Pick<TokenClaims, 'issuedAt' | 'hostname' | 'action' | 'riskScore' | 'anomalies' | 'countryCode' | 'pageAction' | 'cData' | 'ephemeralId'> & {
    challengeId: string | null
  },
  remoteipMatch: boolean | null = null,
): SiteverifyAnswer {
  return {
    success: true,
    challenge_ts: new Date(claims.issuedAt).toISOString(),
    hostname: claims.hostname,
    'error-codes': [],
    action: claims.pageAction ?? claims.action,
    recommendedAction: claims.action,
    cdata: claims.cData,
    riskScore: claims.riskScore,
    score: (100 - claims.riskScore) / 100,
    anomalies: claims.anomalies,
    countryCode: claims.countryCode,
    remoteipMatch,
    metadata: { ephemeral_id: claims.ephemeralId, verification_id: claims.challengeId },
  }
}

export function answerFailure(...codes: SiteverifyErrorCode[]): SiteverifyAnswer {
  return {
    success: false,
    challenge_ts: null,
    hostname: null,
    'error-codes': codes,
    action: null,
    recommendedAction: null,
    cdata: null,
    riskScore: null,
    score: null,
    anomalies: [],
    countryCode: null,
    remoteipMatch: null,
    metadata: { ephemeral_id: null },
  }
}
