import type { TokenReading } from '../token/token.js'
import { testSiteFor } from '../sites/test-site-keys.js'
import { answerFailure, answerSuccess, type SiteverifyAnswer } from './siteverify-answer.js'

/**
 * Documented test secrets, the same strings as Cloudflare Turnstile's, so that a backend's test
 * suite written for Turnstile runs unchanged; Google's reCAPTCHA and hCaptcha's published test
 * secrets pass too, for suites written for those (django-recaptcha falls back to Google's when no
 * key is set). They accept any non-empty response and never touch a real site or spend a token;
 * knowing them grants nothing, so they work in every environment.
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

type PassingTestSecret = (typeof testSecrets)['alwaysPasses' | 'recaptchaPasses' | 'hcaptchaPasses']

/**
 * The hostname a passing test secret answers when the response is no test site key's token
 * (Turnstile's dummy one, a real site's): its vendor's test secret's, which backend libraries
 * special-case (reCAPTCHA.AspNetCore accepts testkey.google.com for Google's test secret only).
 */
const dummyHostnames: Readonly<Record<PassingTestSecret, string>> = {
  [testSecrets.alwaysPasses]: 'example.com',
  [testSecrets.recaptchaPasses]: 'testkey.google.com',
  [testSecrets.hcaptchaPasses]: 'dummy-key-pass',
}

/**
 * The fixed answer for a test secret, or undefined when the secret is not one. A passing one
 * answers a token of a test site key (a site's CI) with the page's facts its redemption would
 * give, hostname, action name and cData, so that a backend that checks the action passes in CI as
 * in production; the rest stays fixed (risk score 0, no anomalies, now), and the token is not
 * spent. The MAC is what counts, not the token's age. A real site's token gets the vendor's dummy page:
 * a backend that shipped with a test secret then fails its hostname and action checks for every
 * visitor, as it should, instead of passing one replayed token for ever; unless it is a library
 * that takes the vendor's test hostname (testkey.google.com) for the test secret, as it would at
 * the vendor (docs/core-flow.md, section 6).
 */
export function answerTestSecret(secret: string, reading: TokenReading, now: number): SiteverifyAnswer | undefined {
  switch (secret) {
    case testSecrets.alwaysPasses:
    case testSecrets.recaptchaPasses:
    case testSecrets.hcaptchaPasses: {
      const isTestSiteToken = reading.outcome !== 'invalid' && testSiteFor(reading.claims.siteKey) !== undefined
      const dummyPage = { hostname: dummyHostnames[secret], pageAction: null, cData: null }
      const { hostname, pageAction, cData } = isTestSiteToken ? reading.claims : dummyPage
      return answerSuccess({ issuedAt: now, hostname, action: 'allow', riskScore: 0, anomalies: [], countryCode: 'XX', pageAction, cData, ephemeralId: null, challengeId: null })
    }
    case testSecrets.alwaysFails:
      return answerFailure('invalid-input-response')
    case testSecrets.alwaysDuplicate:
      return answerFailure('timeout-or-duplicate')
    default:
      return undefined
  }
}
