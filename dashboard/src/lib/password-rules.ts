/** The API's rule (src/domain/accounts/password.ts); the API's answer stays the authority. */
export const MIN_PASSWORD_LENGTH = 10

/** The hint under every field that sets a password: the API's rules (PASSWORD_RULES), in the page's words. */
export const newPasswordHint =
  `At least ${MIN_PASSWORD_LENGTH} characters; not a common password (such as password123), not one character repeated, ` +
  "and not containing your e-mail address. A password manager's generated password is best."
