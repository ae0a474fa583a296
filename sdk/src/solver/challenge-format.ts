/** The challenge text of DESIGN section 4: 64 lowercase hex characters, one SHA-256 block. */
const CHALLENGE_PATTERN = /^[0-9a-f]{64}$/

export function isChallengeText(challenge: string): boolean {
  return CHALLENGE_PATTERN.test(challenge)
}
