/**
 * The catalogue of stable error codes (DESIGN section 3). A code never changes meaning once
 * published; clients branch on `error.code`, people read `error.message`.
 */
export const errorCatalogue = {
  validation_error: { status: 400, message: 'The request is not valid.' },
  api_key_site_not_found: {
    status: 400,
    message: "An API key's siteIds names a site that the account neither owns nor is a member of (or that does not exist).",
  },
  password_unchanged: { status: 400, message: 'The new password is your current password: choose another one.' },
  challenge_invalid: { status: 400, message: 'The challenge is unknown, already used, or belongs to another site.' },
  challenge_expired: { status: 400, message: 'The challenge has expired; request a new one.' },
  solution_invalid: { status: 400, message: 'The nonce does not solve the challenge.' },
  invalid_site_key: {
    status: 401,
    message: "The site key (the page's data-site-key or data-sitekey, the SDK's siteKey option, or the X-Site-Key header of a direct API call) is missing or names no site.",
  },
  unauthorized: { status: 401, message: 'Authentication is required.' },
  invalid_credentials: { status: 401, message: 'The e-mail address or password is wrong.' },
  two_factor_required: { status: 401, message: 'This account has two-factor authentication on: send the code of its authenticator app, or a recovery code, as code.' },
  two_factor_invalid: { status: 401, message: 'The code is not the authenticator app\'s current code, nor an unused recovery code of this account.' },
  passkey_challenge_invalid: {
    status: 400,
    message: "The passkey's answer was made for a challenge that is unknown, expired or used already; ask for new options (POST /api/v1/sessions/passkey/options).",
  },
  passkey_unknown: { status: 401, message: 'No account here has this passkey: it was removed, or was made for another server.' },
  passkey_invalid: { status: 401, message: "The passkey's answer does not verify." },
  forbidden: { status: 403, message: 'You are not allowed to do this.' },
  api_key_site_restricted: {
    status: 403,
    message: 'This API key was made for some sites only, and this would reach others (creating a site): use a key for all sites, or the dashboard.',
  },
  api_key_widening_forbidden: {
    status: 403,
    message: 'An API key may rename or narrow a key, not widen one (full access, more sites, a later expiry): widen it from a logged-in session (the dashboard), with the password.',
  },
  api_key_address_refused: {
    status: 403,
    message:
      "This API key may be used only from the addresses its list names, and this request came from another (behind a proxy, TRUST_PROXY decides which address is the client's).",
  },
  account_disabled: {
    status: 403,
    message: 'This account has been disabled by the operator of this server (npm run account -- enable undoes it): ask them.',
  },
  sign_up_closed: { status: 403, message: 'Sign-ups are closed on this server; ask its operator for an account.' },
  setup_code_invalid: {
    status: 403,
    message: "The first account of this server needs the setup code its log shows at start (or the operator's npm run account -- create).",
  },
  site_requires_two_factor: {
    status: 403,
    message: "This site's owner requires two-factor authentication of its members: turn it on for the account (Account, Two-factor authentication) to reach the site.",
  },
  csrf_rejected: { status: 403, message: 'The request did not come from this service\'s own pages.' },
  clearance_required: {
    status: 403,
    message: 'This address is behind Tollgate\'s gate: open it in a browser with JavaScript, which gets a clearance on the way.',
  },
  token_invalid: { status: 403, message: 'The token is not valid here: forged or changed, of another site or host, or not an allow.' },
  origin_not_allowed: { status: 403, message: 'This site key is not allowed on the requesting origin.' },
  not_found: { status: 404, message: 'Nothing is here.' },
  unsupported_language: { status: 404, message: 'The SDK has no texts in this language; it shows English.' },
  method_not_allowed: { status: 405, message: 'The method is not allowed on this resource.' },
  conflict: { status: 409, message: 'The request conflicts with the current state.' },
  token_spent: { status: 409, message: 'The token has expired or was used already; the page gets a new one.' },
  email_taken: { status: 409, message: 'An account with this e-mail address exists already.' },
  owner_role_fixed: {
    status: 409,
    message: "The owner's role cannot be changed, nor the owner removed: the owner may make a member the owner (POST /api/v1/sites/{id}/transfer), or delete the site.",
  },
  api_key_expired: { status: 409, message: 'This API key has expired: it cannot be changed, only revoked. Create a new key instead.' },
  already_owner: { status: 409, message: 'You own this site already: name one of its members to make them its owner.' },
  not_a_member: { status: 409, message: 'This account is not a member of the site: only a member can be made its owner (invite them first).' },
  member_lacks_two_factor: {
    status: 409,
    message: 'This site requires two-factor authentication of its members, and this member has it off: they must turn it on before they can be made its owner.',
  },
  site_limit_reached: { status: 409, message: 'The account holds the most sites an account may; it must delete one before it can own another.' },
  webhook_not_configured: { status: 409, message: 'The site has no webhook URL and secret; set settings.webhookUrl and settings.webhookSecret first.' },
  webhook_event_not_redeliverable: {
    status: 409,
    message: 'Only the verification.blocked event of a real block can be sent again; surge events, test sends and counts of dropped events are not kept.',
  },
  webhook_event_expired: {
    status: 410,
    message: "The blocked verification this delivery told of is no longer in the site's verification log (its retention or an erasure removed it), so its event cannot be rebuilt.",
  },
  idempotency_key_reused: {
    status: 422,
    message: 'This Idempotency-Key was used in the last 24 hours with another request body: send a new key for a new request.',
  },
  precondition_failed: { status: 412, message: 'The site changed after you read it (If-Match); read it again and reapply your change.' },
  request_timeout: { status: 408, message: 'The request did not arrive in time.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, message: 'The request body has an unsupported content type.' },
  expectation_failed: { status: 417, message: 'The Expect header asks for something this service does not do (only 100-continue).' },
  rate_limited: { status: 429, message: 'Too many requests; retry later.' },
  headers_too_large: { status: 431, message: 'The request line and headers are too large (a URL of some 16 KiB or more).' },
  internal_error: { status: 500, message: 'Something went wrong on our side.' },
  service_unavailable: { status: 503, message: 'A dependency of the service is unavailable; retry later.' },
} as const satisfies Record<string, { status: number; message: string }>

export type ErrorCode = keyof typeof errorCatalogue

export interface ErrorDetail {
  field?: string
  message: string
}

/** The message of every validation_error that lists its problems in details. */
export const INVALID_REQUEST_MESSAGE = 'The request is not valid; see details.'

/** An expected, client-facing failure. Anything else that is thrown is treated as a bug (500). */
export class ApiError extends Error {
  readonly statusCode: number

  constructor(
    readonly code: ErrorCode,
    message: string = errorCatalogue[code].message,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message)
    this.name = 'ApiError'
    this.statusCode = errorCatalogue[code].status
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; requestId: string; details?: ErrorDetail[] }
}

export function errorBody(code: ErrorCode, requestId: string, message?: string, details?: ErrorDetail[]): ErrorBody {
  return {
    error: {
      code,
      message: message ?? errorCatalogue[code].message,
      requestId,
      ...(details === undefined ? {} : { details }),
    },
  }
}

/** 400 validation_error naming each problem (with its field, where there is one). */
export function invalidRequest(details: ErrorDetail[]): ApiError {
  return new ApiError('validation_error', INVALID_REQUEST_MESSAGE, details)
}

export function throwIfInvalid(details: ErrorDetail[]): void {
  if (details.length > 0) throw invalidRequest(details)
}
