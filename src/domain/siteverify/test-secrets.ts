import { answerFailure, answerSuccess, type SiteverifyAnswer } from './siteverify-answer.js'

/**
 * Documented test secrets, the same strings as Cloudflare Turnstile's, so that a backend's test
 * suite written for Turnstile runs unchanged; Google's reCAPTCHA and hCaptcha's published test
 * secrets pass too, for suites written for those (django-recaptcha falls back to Google's when no
 * key is set). They accept any non-empty response and never touch a real site or token; knowing
 * them grants nothing, so they work in every environment.
 */
export const testSecrets = {
  alwaysPasses: '1x0000000000000000000000000000000AA',
  alwaysFails: '2x0000000000000000000000000000000AA',
  alwaysDuplicate: '3x0000000000000000000000000000000AA',
  recaptchaPasses: '6LeIxAcTAAAAAGG-vFI1TnRWxMZNFuojJ4WifJWe',
  hcaptchaPasses: '0x0000000000000000000000000000000000000000',
} as const

const testSecretValues: ReadonlySet<unknown> = new Set(Object.values(testSecrets))

export function isTestSecret(secret: unknown): boolean {
  return testSecretValues.has(secret)
}

/** The fixed answer for a test secret, or undefined when the secret is not one. */
export function answerTestSecret(secret: string, now: number): SiteverifyAnswer | undefined {
  switch (secret) {
    case testSecrets.alwaysPasses:
    case testSecrets.recaptchaPasses:
    case testSecrets.hcaptchaPasses:
      return answerSuccess({ issuedAt: now, hostname: 'example.com', action: 'allow', riskScore: 0, anomalies: [], countryCode: 'XX', pageAction: null, cData: null })
    case testSecrets.alwaysFails:
      return answerFailure('invalid-input-response')
    case testSecrets.alwaysDuplicate:
      return answerFailure('timeout-or-duplicate')
    default:
      return undefined
  }
}
