import type { TollgateErrorCode } from './errors.js'

/**
 * Every visible text the SDK writes. Sites translate by calling `Tollgate.setStrings({...})` or
 * by a `<script type="application/json" data-tollgate-strings>` block on the page.
 */
export interface TollgateStrings {
  solving: string
  verifying: string
  verified: string
  failed: string
  blocked: string
  unreachable: string
  /** The service answered but cannot verify for a moment (503, 502, 504: its storage or gateway). */
  unavailable: string
  rateLimited: string
  unsupported: string
  timeout: string
  /** The site key is missing, unknown, or not allowed on this page's domain: trying again cannot help. */
  misconfigured: string
  /**
   * Follows the sentence of a turned-away visitor (blocked, or the step-ups ran out); `{reference}` is the error's reference.
   * Optional, as every string added later will be: a page's full set of strings written before it still compiles.
   */
  reference?: string
}

const defaults: Required<TollgateStrings> = {
  solving: 'Checking your browser\u2026',
  verifying: 'Verifying\u2026',
  verified: 'Verified.',
  failed: 'Verification failed. Please try again.',
  blocked: 'This request was blocked. If you think this is a mistake, please contact the site owner.',
  unreachable: 'The verification service cannot be reached. Check your connection and try again.',
  unavailable: 'The verification service is unavailable for a moment. Please try again shortly.',
  rateLimited: 'Too many attempts. Please wait a moment and try again.',
  unsupported: 'The verification could not start in this browser. If this keeps happening, please tell the site owner.',
  timeout: 'Verification took too long. Please try again.',
  misconfigured: 'This form cannot be verified here: it is not set up for this site. Please tell the site owner.',
  reference: 'Reference: {reference}',
}

let current: Required<TollgateStrings> = { ...defaults }

export function setStrings(strings: Partial<TollgateStrings>): void {
  const next = { ...current }
  for (const key of Object.keys(defaults) as (keyof TollgateStrings)[]) {
    const value = strings[key]
    if (typeof value === 'string' && value !== '') next[key] = value
  }
  current = next
}

export function getStrings(): Required<TollgateStrings> {
  return current
}

/** Which sentence tells of which failure; any other is `failed`. */
const sentenceOf: Partial<Record<TollgateErrorCode, keyof TollgateStrings>> = {
  blocked: 'blocked',
  network_error: 'unreachable',
  server_error: 'unavailable',
  rate_limited: 'rateLimited',
  worker_unavailable: 'unsupported',
  timeout: 'timeout',
  // No site key (or bad options in the page's code): the site's mistake, like an unknown key.
  invalid_options: 'misconfigured',
  invalid_site_key: 'misconfigured',
  origin_not_allowed: 'misconfigured',
}

/** The visible sentence for a failure, followed by its reference when it has one (TollgateError.reference). */
export function messageFor(code: TollgateErrorCode, reference?: string): string {
  const sentence = current[sentenceOf[code] ?? 'failed']
  return reference === undefined ? sentence : `${sentence} ${current.reference.replace('{reference}', reference)}`
}
