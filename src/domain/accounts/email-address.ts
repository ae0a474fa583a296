export const EMAIL_MAX_LENGTH = 254

/**
 * The address as stored: trimmed and in Unicode normalization form C (an "é" typed as one
 * character or as "e" and a combining accent is one address), otherwise as typed. Uniqueness and
 * log-in compare lowercased addresses (the database index is on lower(email)).
 */
export function normalizeEmailAddress(email: string): string {
  return email.trim().normalize('NFC')
}

/**
 * Characters that reorder the text around them (bidirectional controls): no address holds one,
 * and `\u202Eexample.com@...` would show an operator something else than it is.
 */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/

/** A deliberately loose check: one @, something on both sides, a dot in the domain, no spaces, no bidi controls. */
export function isEmailAddress(email: string): boolean {
  return email.length <= EMAIL_MAX_LENGTH && /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(email) && !BIDI_CONTROLS.test(email)
}
