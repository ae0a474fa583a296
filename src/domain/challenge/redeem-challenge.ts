import type { KeyValueStore } from '../../storage/ports.js'
import type { MacKey } from '../mac.js'
import { verifySolution } from '../proof-of-work/verify-solution.js'
import { challengeKey } from './challenge-keys.js'
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
  | { outcome: 'redeemed'; record: ChallengeRecord }
  | { outcome: 'rejected'; code: RedemptionRejection; record?: ChallengeRecord }

/**
 * Consumes a challenge and judges the solution. A challenge gets exactly one submission: the
 * record is taken (read and deleted in one atomic step) before anything else, so of concurrent
 * submissions exactly one sees it and the rest get challenge_invalid, and a wrong nonce cannot be
 * followed by another guess.
 */
export async function redeemChallenge(store: KeyValueStore, challengeKeyMaterial: MacKey, submission: Submission): Promise<Redemption> {
  // 1. Take the record: unknown, already used and long-expired challenges all end here.
  const stored = await store.take(challengeKey(submission.challengeId))
  const record = stored === null ? undefined : decodeChallengeRecord(stored)
  if (record === undefined) return { outcome: 'rejected', code: 'challenge_invalid' }
  // 2. Site binding: a challenge works only with the site key it was issued for.
  if (record.siteId !== submission.siteId) return { outcome: 'rejected', code: 'challenge_invalid' }
  // 3. Expiry, checked on the record (the key outlives expiresAt by a grace period for this answer).
  if (submission.now > record.expiresAt) return { outcome: 'rejected', code: 'challenge_expired', record }
  // 4. The proof of work, against the challenge string recomputed under the server key.
  const challenge = computeChallenge(challengeKeyMaterial, { challengeId: submission.challengeId, ...record })
  if (!verifySolution({ challenge, difficulty: record.difficulty }, submission.nonce)) {
    return { outcome: 'rejected', code: 'solution_invalid', record }
  }
  return { outcome: 'redeemed', record }
}
