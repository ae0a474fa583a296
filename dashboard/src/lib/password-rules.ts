/** The API's rule (src/domain/accounts/password.ts); the API's answer stays the authority. */
export const MIN_PASSWORD_LENGTH = 10

/** The hint under every field that sets a password. */
export const newPasswordHint = `At least ${MIN_PASSWORD_LENGTH} characters. A password manager's generated password is best.`
