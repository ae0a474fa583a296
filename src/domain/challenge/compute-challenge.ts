import { hmacSha256, type MacKey } from '../mac.js'

/** What a challenge string commits to (DESIGN section 4). */
export interface ChallengeBinding {
  challengeId: string
  siteId: string
  difficulty: number
  /** Epoch milliseconds. */
  expiresAt: number
}

/**
 * The challenge string: HMAC-SHA256 under the server's challenge key of id, site, difficulty and
 * expiry, as 64 lowercase hex characters (exactly one SHA-256 block, so solvers precompute its
 * state once). Nobody without the key can predict it, so no work can be done before it is issued;
 * the verifier recomputes it from the stored record instead of trusting anything the client sends.
 */
export function computeChallenge(key: MacKey, binding: ChallengeBinding): string {
  return hmacSha256(key, `${binding.challengeId}|${binding.siteId}|${binding.difficulty}|${binding.expiresAt}`).toString('hex')
}
