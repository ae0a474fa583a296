import { createHmac } from 'node:crypto'

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
export function computeChallenge(key: Buffer, binding: ChallengeBinding): string {
  return createHmac('sha256', key)
    .update(`${binding.challengeId}|${binding.siteId}|${binding.difficulty}|${binding.expiresAt}`, 'utf8')
    .digest('hex')
}
