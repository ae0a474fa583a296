/**
 * The nonce format of DESIGN section 4: a decimal string without leading zeros, below 2^53 (so
 * that every solver, including JavaScript's numbers, represents it exactly). 2^53 has 16 digits,
 * so the pattern bounds the length and `isNonceText` checks the value.
 */
export const NONCE_PATTERN = '^(0|[1-9][0-9]{0,15})$'

const noncePattern = new RegExp(NONCE_PATTERN)

export function isNonceText(nonce: string): boolean {
  return noncePattern.test(nonce) && Number(nonce) < 2 ** 53
}
