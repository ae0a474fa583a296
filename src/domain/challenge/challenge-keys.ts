/**
 * Key-value store keys of the challenge flow. Each operation touches one key, so they are safe on
 * Redis Cluster without hash tags.
 */
export function challengeKey(challengeId: string): string {
  return `challenge:${challengeId}`
}

/**
 * How long a challenge stays in the store after its expiresAt: a late submission then meets its
 * record and gets challenge_expired (ask again) rather than challenge_invalid (something is wrong).
 */
export const EXPIRED_CHALLENGE_GRACE_MS = 60_000
