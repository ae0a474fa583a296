/**
 * What reCAPTCHA v3's `grecaptcha.execute(siteKey)` resolves to when the visitor is turned away
 * (blocked, or the step-ups ran out): Google's gives every visitor a token and lets the backend
 * refuse a low score, so a page written for it posts its form whatever comes. This string is no
 * token: Siteverify answers it as a failure on every path and for every secret, test secrets
 * included (src/domain/siteverify/redeem-token.ts), and spends or mints nothing, so forging it
 * gains nothing. After the prefix comes the reference the visitor would have been shown (the
 * dashboard's log finds the verification with it), or nothing when the service's request id
 * was not its own (a proxy's).
 */
export const BLOCKED_RESPONSE_PREFIX = 'tollgate-blocked:'

/** Whether a Siteverify response is a turned-away visitor's placeholder (BLOCKED_RESPONSE_PREFIX). */
export function isBlockedResponse(response: string): boolean {
  return response.startsWith(BLOCKED_RESPONSE_PREFIX)
}
