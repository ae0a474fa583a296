/**
 * Every failure reaches the page as a TollgateError with a stable `code` that the site can
 * branch on; `message` is an English sentence for logs, and the visible text comes from the
 * translatable strings (see strings.ts).
 */
export type TollgateErrorCode =
  /** The service could not be reached (offline, DNS, CORS, or the server is down). */
  | 'network_error'
  /** The service answered something that is not the protocol (e.g. a proxy error page). */
  | 'invalid_response'
  /** The service answered 5xx. */
  | 'server_error'
  /** The risk assessment recommends blocking this visitor. */
  | 'blocked'
  /** The service kept asking for step-up challenges beyond the SDK's limit. */
  | 'challenge_failed'
  | 'rate_limited'
  | 'invalid_site_key'
  | 'origin_not_allowed'
  | 'challenge_expired'
  | 'challenge_invalid'
  | 'solution_invalid'
  | 'validation_error'
  /**
   * Kept for pages that branch on it: releases before 2026-12-03 gave it where no worker could
   * start; this one solves on the page itself there (solve-on-page.ts).
   */
  | 'worker_unavailable'
  | 'timeout'
  | 'aborted'
  /** Bad arguments from the calling code (e.g. no site key). */
  | 'invalid_options'

export interface TollgateErrorDetails {
  status?: number
  requestId?: string
  retryAfterSeconds?: number
  riskScore?: number
  reference?: string
}

export class TollgateError extends Error {
  readonly code: TollgateErrorCode
  readonly status: number | undefined
  readonly requestId: string | undefined
  readonly retryAfterSeconds: number | undefined
  readonly riskScore: number | undefined
  /**
   * For blocked and challenge_failed: what the visitor can quote to the site's owner, who finds
   * the verification with it in the dashboard's log (the start of requestId, the row's id).
   */
  readonly reference: string | undefined

  constructor(code: TollgateErrorCode, message: string, details: TollgateErrorDetails = {}) {
    super(message)
    this.name = 'TollgateError'
    this.code = code
    this.status = details.status
    this.requestId = details.requestId
    this.retryAfterSeconds = details.retryAfterSeconds
    this.riskScore = details.riskScore
    this.reference = details.reference
  }
}

/** What every step of a verification throws once its signal is aborted. */
export function abortedError(): TollgateError {
  return new TollgateError('aborted', 'Aborted.')
}

const serverCodes: ReadonlySet<string> = new Set([
  'rate_limited', 'invalid_site_key', 'origin_not_allowed', 'challenge_expired', 'challenge_invalid',
  'solution_invalid', 'validation_error',
])

/** Maps an error code from the service's error body onto the SDK's codes. */
export function codeFromServer(code: unknown, status: number): TollgateErrorCode {
  if (typeof code === 'string' && serverCodes.has(code)) return code as TollgateErrorCode
  // A proxy in front of the service may answer 429 with a page of its own.
  if (status === 429) return 'rate_limited'
  return status >= 500 ? 'server_error' : 'invalid_response'
}
