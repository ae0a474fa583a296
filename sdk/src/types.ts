/** The public types; sdk/tollgate.d.ts repeats them for sites that use the script tag. */
export type TollgateAction = 'allow' | 'challenge' | 'block'

export type TollgateStatus = 'idle' | 'solving' | 'verifying' | 'verified' | 'error'

export interface ExecuteOptions {
  /** The site key shown in the dashboard. */
  siteKey: string
  /** The Tollgate service, e.g. "https://tollgate.example.com"; defaults to the origin the script came from. */
  apiUrl?: string
  /** Where the worker and WebAssembly are served; defaults to `${apiUrl}/sdk/v1/`. */
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
