import { randomUUID } from 'node:crypto'
import type { KeyValueStore } from '../../storage/ports.js'
import { challengeKey, EXPIRED_CHALLENGE_GRACE_MS } from './challenge-keys.js'
import { encodeChallengeRecord, type ChallengeRecord } from './challenge-record.js'
import { computeChallenge } from './compute-challenge.js'

/** The Challenge object of the interface spec, as the API returns it. */
export interface Challenge {
  challengeId: string
  challenge: string
  difficulty: number
  mode: 'invisible'
  algorithm: 'SHA-256'
  /** ISO 8601 UTC with milliseconds. */
  expiresAt: string
}

export interface ChallengeRequest {
  siteId: string
  difficulty: number
  lifetimeSeconds: number
  stepUps: number
  clientTag: string
  now: number
}

/** Creates a challenge bound to its site and keeps its record until shortly after it expires. */
export async function issueChallenge(store: KeyValueStore, challengeKeyMaterial: Buffer, request: ChallengeRequest): Promise<Challenge> {
  const challengeId = randomUUID()
  const lifetimeMs = request.lifetimeSeconds * 1000
  const record: ChallengeRecord = {
    siteId: request.siteId,
    difficulty: request.difficulty,
    issuedAt: request.now,
    expiresAt: request.now + lifetimeMs,
    stepUps: request.stepUps,
    clientTag: request.clientTag,
  }
  await store.set(challengeKey(challengeId), encodeChallengeRecord(record), lifetimeMs + EXPIRED_CHALLENGE_GRACE_MS)
  return {
    challengeId,
    challenge: computeChallenge(challengeKeyMaterial, { challengeId, ...record }),
    difficulty: record.difficulty,
    mode: 'invisible',
    algorithm: 'SHA-256',
    expiresAt: new Date(record.expiresAt).toISOString(),
  }
}
