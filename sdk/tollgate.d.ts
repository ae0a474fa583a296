/**
 * Types of the Tollgate browser SDK: the module build (`tollgate.mjs`, `import { execute } from
 * '@tollgate/sdk'`) and the script-tag build (`window.Tollgate`). Kept in step with sdk/src/ by
 * test/sdk/types.test.ts.
 */

export type TollgateAction = 'allow' | 'challenge' | 'block'

export type TollgateStatus = 'idle' | 'solving' | 'verifying' | 'verified' | 'error'

export type TollgateErrorCode =
  | 'network_error'
  | 'invalid_response'
  | 'server_error'
  | 'blocked'
  | 'challenge_failed'
  | 'rate_limited'
  | 'invalid_site_key'
  | 'origin_not_allowed'
  | 'challenge_expired'
  | 'challenge_invalid'
  | 'solution_invalid'
  | 'validation_error'
  | 'worker_unavailable'
  | 'timeout'
  | 'aborted'
  | 'invalid_options'

export interface ExecuteOptions {
  /** The site key shown in the dashboard. */
  siteKey: string
  /** The Tollgate service, e.g. "https://tollgate.example.com"; defaults to the origin the script came from. */
  apiUrl?: string
  /** Where the worker, the WebAssembly and the translations (`strings/{language}.json`) are served; defaults to `${apiUrl}/sdk/v1/`. */
  assetsUrl?: string
  /** Solver workers; defaults to the core count, at most 8. */
  workers?: number
  /** Gives up solving after this long (default: until the challenge expires, the site's challenge lifetime less a margin, 10 s to 5 min: about 110 s with the default lifetime). */
  timeoutMs?: number
  /** How many step-up challenges to answer before giving up (default 5, the most a site may set). */
  maxStepUps?: number
  /**
   * The page's action name ('login', 'signup'): 1-32 letters, digits, `_`, `-` or `/`. Siteverify
   * answers it as `action`, as Turnstile and reCAPTCHA v3 do, for backends that check it.
   */
  action?: string
  /** The page's own data (up to 255 letters, digits, `_` or `-`), answered by Siteverify as `cdata`, as Turnstile's cData. */
  cData?: string
  signal?: AbortSignal
  onStatus?: (status: TollgateStatus) => void
}

export interface ExecuteResult {
  /** Send this to your backend, which redeems it once with Siteverify. */
  token: string
  riskScore: number
  action: TollgateAction
  /** When the token stops being redeemable (ISO 8601). */
  expiresAt: string
}

export interface BindOptions {
  siteKey?: string
  apiUrl?: string
  assetsUrl?: string
  /** The hidden field's name (default `tollgate-token`); a form's data-response-field-name wins. */
  fieldName?: string
  /** The page's action name and data for Siteverify (see ExecuteOptions); a form's data-action and data-cdata win. */
  action?: string
  cData?: string
  /**
   * The language of the forms' texts (`de`, `pt-BR`). The first the SDK speaks wins, in this order:
   * a form's own `data-lang`, this option, the script tag's `data-lang`, the closest `lang`
   * attribute (`<html lang>`), the browser's languages, English. `auto`, the default, is no choice.
   */
  language?: string
  /**
   * A shadow root whose forms to protect besides the document's (a submit inside a web component
   * never reaches the document); the other options given with it apply to that root's forms only.
   */
  root?: ShadowRoot
}

export interface TollgateStrings {
  solving: string
  verifying: string
  verified: string
  failed: string
  blocked: string
  unreachable: string
  /** The service answered but cannot verify for a moment (5xx). */
  unavailable: string
  rateLimited: string
  unsupported: string
  timeout: string
  misconfigured: string
  /**
   * Follows the sentence of a turned-away visitor (blocked, or the step-ups ran out); `{reference}` is the error's reference.
   * Optional, as every string added later will be: a page's full set of strings written before it still compiles
   * (the English text is used until the page gives one).
   */
  reference?: string
  /** Replaces `solving` on a form's status line after 5 s of solving: a slow device is still at work. */
  slow?: string
  /** A vendor's widget (compat.js) whose token expired and was not renewed by itself (Turnstile's `refresh-expired: 'manual'` or `'never'`). */
  expired?: string
  /** The button of a vendor's checkbox-like widget (compat.js) that starts a new run, after an expiry or a failure. */
  refresh?: string
}

export declare class TollgateError extends Error {
  readonly code: TollgateErrorCode
  /** The HTTP status, when the service answered. */
  readonly status: number | undefined
  readonly requestId: string | undefined
  /** From Retry-After, for rate_limited. */
  readonly retryAfterSeconds: number | undefined
  /** For blocked and challenge_failed. */
  readonly riskScore: number | undefined
  /**
   * For blocked and challenge_failed: what the visitor can quote to the site's owner (`1a2b3c4d-5e6f`,
   * the start of requestId), who finds the verification with it in the dashboard's verification log.
   */
  readonly reference: string | undefined
  constructor(code: TollgateErrorCode, message: string, details?: { status?: number; requestId?: string; retryAfterSeconds?: number; riskScore?: number; reference?: string })
}

/**
 * Solves a challenge in Web Workers, submits it with the browser signals, and resolves to a token.
 * Call it when the form is submitted: the token expires (`expiresAt`). Without a document (a
 * server) it rejects with `invalid_options`.
 */
export declare function execute(options: ExecuteOptions): Promise<ExecuteResult>
/**
 * Aborts verifications in flight (they reject or end with `aborted`) and clears filled tokens. With a
 * target, only those of the forms of bindForms in it, or of that form: a component that leaves the
 * page (its cleanup) resets its own form, and the page's other forms and execute() calls go on.
 */
export declare function reset(target?: Element | ShadowRoot): void
/**
 * Sets the site's own visible texts, which win over the built-in translations whenever these arrive,
 * in every language (set them in the visitor's language, or not at all); missing keys keep their current text.
 */
export declare function setStrings(strings: Partial<TollgateStrings>): void
/**
 * Binds every current and future form[data-tollgate] (the script-tag build does this itself); a second call changes only the options it names.
 * Without a document (a server rendering the module) it does nothing.
 */
export declare function bindForms(options?: BindOptions): void
export declare const version: string

/** `window.Tollgate` as the script tag's build, /sdk/v1/tollgate.js, sets it: the whole API. */
export interface TollgateApi {
  execute: typeof execute
  reset: typeof reset
  setStrings: typeof setStrings
  bindForms: typeof bindForms
  TollgateError: typeof TollgateError
  version: string
}

/**
 * `window.Tollgate` as the vendor-compatible scripts set it (/turnstile/v0/api.js,
 * /recaptcha/api.js, /recaptcha/enterprise.js, /1/api.js, /sdk/v1/compat.js; sdk/README.md,
 * section 9): the API without `bindForms`, as those pages have no forms of Tollgate's to bind.
 */
export type TollgateCompatApi = Omit<TollgateApi, 'bindForms'>

/**
 * The events of a protected form; they bubble, so a listener on the document hears every form's,
 * except those of forms inside a shadow root (bindForms({ root })): the events stay in the root,
 * so listen on the form or on the root.
 */
interface TollgateFormEvents {
  'tollgate:verified': CustomEvent<ExecuteResult>
  'tollgate:error': CustomEvent<TollgateError>
}

declare global {
  interface Window {
    /**
     * Set by the script-tag build, /sdk/v1/tollgate.js, once it has run. Declared as always there,
     * as vendors' types do, for pages that load the tag first; an `async` tag may run after the
     * page's own script, and a tag that fails to load never sets it: such a page checks first
     * (sdk/README.md, section 2).
     * `bindForms` is there with tollgate.js only: the vendor-compatible scripts (TollgateCompatApi)
     * leave it out, so a page that tollgate.js serves says so: `(window.Tollgate as TollgateApi).bindForms(...)`.
     */
    Tollgate: TollgateCompatApi & { bindForms?: typeof bindForms }
  }
  interface HTMLElementEventMap {
    'tollgate:verified': TollgateFormEvents['tollgate:verified']
    'tollgate:error': TollgateFormEvents['tollgate:error']
  }
  interface DocumentEventMap extends TollgateFormEvents {
    /** Fired on the document by the script-tag build once window.Tollgate is set. */
    'tollgate:ready': CustomEvent<undefined>
  }
}
