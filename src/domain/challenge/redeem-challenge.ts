import type { KeyValueStore } from '../../storage/ports.js'
import type { MacKey } from '../mac.js'
import { verifySolution } from '../proof-of-work/verify-solution.js'
import { challengeKey, EXPIRED_CHALLENGE_GRACE_MS } from './challenge-keys.js'
import { decodeChallengeRecord, type ChallengeRecord } from './challenge-record.js'
import { computeChallenge } from './compute-challenge.js'

export interface Submission {
  /** Canonical (lowercase) UUID. */
  challengeId: string
  nonce: string
  /** The site named by the submission's X-Site-Key. */
  siteId: string
  now: number
}

export type RedemptionRejection = 'challenge_invalid' | 'challenge_expired' | 'solution_invalid'

export type Redemption =
  /** elapsedMs: the time since the challenge was issued, by the key-value store's clock. */
  | { outcome: 'redeemed'; record: ChallengeRecord; elapsedMs: number }
  | { outcome: 'rejected'; code: RedemptionRejection; record?: ChallengeRecord }

/**
 * Consumes a challenge and judges the solution. A challenge gets exactly one submission: the
 * record is taken (read and deleted in one atomic step) before anything else, so of concurrent
 * submissions exactly one sees it and the rest get challenge_invalid, and a wrong nonce cannot be
 * followed by another guess.
 */
export async function redeemChallenge(store: KeyValueStore, challengeKeyMaterial: MacKey, submission: Submission): Promise<Redemption> {
  // 1. Take the record: unknown, already used and long-expired challenges all end here.
  const taken = await store.take(challengeKey(submission.challengeId))
  const record = taken === null ? undefined : decodeChallengeRecord(taken.value)
  if (taken === null || record === undefined) return { outcome: 'rejected', code: 'challenge_invalid' }
  // 2. Site binding: a challenge works only with the site key it was issued for.
  if (record.siteId !== submission.siteId) return { outcome: 'rejected', code: 'challenge_invalid' }
  // 3. Expiry. The key was set to live the challenge's lifetime plus a grace period (for this
  // answer), so the time it had left says how long ago it was issued by the store's clock, which
  // every instance shares: the issuing instance's clock may be ahead of or behind this one's, and
  // a visitor must not pay for that with an early expiry or an "impossible" solve time.
  const lifetimeMs = record.expiresAt - record.issuedAt
  const elapsedMs = Number.isFinite(taken.timeToLiveMs)
    ? lifetimeMs + EXPIRED_CHALLENGE_GRACE_MS - taken.timeToLiveMs
    : submission.now - record.issuedAt
  if (elapsedMs > lifetimeMs) return { outcome: 'rejected', code: 'challenge_expired', record }
  // 4. The proof of work, against the challenge string recomputed under the server key.
  const challenge = computeChallenge(challengeKeyMaterial, { challengeId: submission.challengeId, ...record })
  if (!verifySolution({ challenge, difficulty: record.difficulty }, submission.nonce)) {
    return { outcome: 'rejected', code: 'solution_invalid', record }
  }
  return { outcome: 'redeemed', record, elapsedMs }
}
