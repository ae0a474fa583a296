import { randomUUID } from 'node:crypto'
import type { KeyValueStore } from '../../storage/ports.js'
import type { MacKey } from '../mac.js'
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

/** A challenge's id and record, before or after it is stored. */
export interface ChallengeDraft {
  challengeId: string
  record: ChallengeRecord
}

/** A new challenge bound to its site and client; nothing is stored yet. */
export function draftChallenge(request: ChallengeRequest): ChallengeDraft {
  return {
    challengeId: randomUUID(),
    record: {
      siteId: request.siteId,
      difficulty: request.difficulty,
      issuedAt: request.now,
      expiresAt: request.now + request.lifetimeSeconds * 1000,
      stepUps: request.stepUps,
      clientTag: request.clientTag,
    },
  }
}

/** Keeps the record until shortly after it expires; storing a draft again replaces the record. */
export async function storeChallenge(store: KeyValueStore, draft: ChallengeDraft): Promise<void> {
  const { record } = draft
  await store.set(challengeKey(draft.challengeId), encodeChallengeRecord(record), record.expiresAt - record.issuedAt + EXPIRED_CHALLENGE_GRACE_MS)
}

/** The Challenge object of a stored draft, as the API answers it. */
export function presentChallenge(challengeKeyMaterial: MacKey, draft: ChallengeDraft): Challenge {
  const { challengeId, record } = draft
  return {
    challengeId,
    challenge: computeChallenge(challengeKeyMaterial, { challengeId, ...record }),
    difficulty: record.difficulty,
    mode: 'invisible',
    algorithm: 'SHA-256',
    expiresAt: new Date(record.expiresAt).toISOString(),
  }
}

/** Creates a challenge bound to its site and keeps its record until shortly after it expires. */
export async function issueChallenge(store: KeyValueStore, challengeKeyMaterial: MacKey, request: ChallengeRequest): Promise<Challenge> {
  const draft = draftChallenge(request)
  await storeChallenge(store, draft)
  return presentChallenge(challengeKeyMaterial, draft)
}
