import type { SiteverifyAnswer, SiteverifyErrorCode } from './siteverify-answer.js'

/**
 * A failure as the vendors answer it: success and error-codes only (Turnstile adds an empty
 * messages list). Tollgate's own path keeps every field, null where a token's facts would be;
 * typed clients written for a vendor (pydantic's `cdata: str = ''`) refuse those nulls.
 */
export interface VendorFailure {
  readonly success: false
  readonly 'error-codes': readonly SiteverifyErrorCode[]
  readonly messages?: readonly never[]
}

export type VendorAnswer = SiteverifyAnswer | VendorFailure

/** Turns Tollgate's answer into what the caller of one path expects. */
export type AnswerShape = (answer: SiteverifyAnswer) => VendorAnswer

/** The answer as it is: Tollgate's own path (docs/core-flow.md, section 6). */
export const tollgateShape: AnswerShape = (answer) => answer

/**
 * The vendors' failures, built once per list of codes and frozen: Siteverify is a hot path, and a
 * failure's body depends on its codes alone (a handful of lists, from a fixed set of codes).
 */
function vendorFailures(extra: { messages?: readonly never[] }): (codes: readonly SiteverifyErrorCode[]) => VendorFailure {
  const bodies = new Map<string, VendorFailure>()
  return (codes) => {
    const key = codes.join(' ')
    let body = bodies.get(key)
    if (body === undefined) {
      body = Object.freeze({ success: false, 'error-codes': Object.freeze([...codes]), ...extra })
      bodies.set(key, body)
    }
    return body
  }
}

const recaptchaFailure = vendorFailures({})
const turnstileFailure = vendorFailures({ messages: Object.freeze([]) })

/** reCAPTCHA's and hCaptcha's paths: a success as Tollgate's, a failure without the null fields. */
export const recaptchaShape: AnswerShape = (answer) => (answer.success ? answer : recaptchaFailure(answer['error-codes']))

/**
 * Turnstile's path: a failure is `{success, error-codes, messages: []}`, and a success without the
 * page's data has `cdata: ""`, as Cloudflare answers it. The success answer is fresh per call, so it
 * is completed in place.
 */
export const turnstileShape: AnswerShape = (answer) => {
  if (!answer.success) return turnstileFailure(answer['error-codes'])
  answer.cdata ??= ''
  return answer
}
