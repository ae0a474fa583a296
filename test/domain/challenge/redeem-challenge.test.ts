import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { challengeKey, EXPIRED_CHALLENGE_GRACE_MS } from '../../../src/domain/challenge/challenge-keys.js'
import { chooseDifficulty, MAX_DIFFICULTY } from '../../../src/domain/challenge/choose-difficulty.js'
import { issueChallenge, type Challenge } from '../../../src/domain/challenge/issue-challenge.js'
import { redeemChallenge } from '../../../src/domain/challenge/redeem-challenge.js'
import { solveChallenge } from '../../../src/domain/proof-of-work/solve-challenge.js'
import { verifySolution } from '../../../src/domain/proof-of-work/verify-solution.js'
import { openMemoryStore } from '../../../src/storage/memory/memory-store.js'
import type { KeyValueStore } from '../../../src/storage/ports.js'

const key = Buffer.alloc(32, 1)
const siteId = randomUUID()
const otherSiteId = randomUUID()
const issuedAt = 1_767_225_480_000

describe('issuing and redeeming challenges', () => {
  let now = issuedAt
  let store: KeyValueStore
  beforeEach(() => {
    now = issuedAt
    store = openMemoryStore({ now: () => now })
  })
  afterEach(() => store.close())

  const issue = (overrides: { lifetimeSeconds?: number } = {}) =>
    issueChallenge(store, key, { siteId, difficulty: 6, lifetimeSeconds: overrides.lifetimeSeconds ?? 120, stepUps: 0, clientTag: 'tag', now })
  const redeem = (challenge: Challenge, nonce: string, site = siteId) =>
    redeemChallenge(store, key, { challengeId: challenge.challengeId, nonce, siteId: site, now })
  const solve = (challenge: Challenge) => solveChallenge({ challenge: challenge.challenge, difficulty: challenge.difficulty })

  it('issues the spec\'s Challenge object', async () => {
    const challenge = await issue()
    expect(challenge).toEqual({
      challengeId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      challenge: expect.stringMatching(/^[0-9a-f]{64}$/),
      difficulty: 6,
      mode: 'invisible',
      algorithm: 'SHA-256',
      expiresAt: '2026-01-01T00:00:00.000Z',
    })
  })

  it('keeps the record until a grace period after expiry', async () => {
    const challenge = await issue()
    expect(await store.timeToLive(challengeKey(challenge.challengeId))).toBe(120_000 + EXPIRED_CHALLENGE_GRACE_MS)
  })

  it('redeems a solved challenge once', async () => {
    const challenge = await issue()
    const nonce = solve(challenge)
    expect(await redeem(challenge, nonce)).toMatchObject({ outcome: 'redeemed', record: { siteId, difficulty: 6, issuedAt } })
    expect(await redeem(challenge, nonce)).toEqual({ outcome: 'rejected', code: 'challenge_invalid' })
  })

  it('refuses an unknown challenge', async () => {
    const challenge = await issue()
    expect(await redeem({ ...challenge, challengeId: randomUUID() }, solve(challenge))).toEqual({ outcome: 'rejected', code: 'challenge_invalid' })
  })

  it('refuses another site\'s challenge as challenge_invalid', async () => {
    const challenge = await issue()
    expect(await redeem(challenge, solve(challenge), otherSiteId)).toEqual({ outcome: 'rejected', code: 'challenge_invalid' })
  })

  it('answers challenge_expired after expiresAt and challenge_invalid once the grace period is over', async () => {
    const first = await issue()
    const second = await issue()
    now = issuedAt + 120_001
    expect(await redeem(first, solve(first))).toMatchObject({ outcome: 'rejected', code: 'challenge_expired' })
    now = issuedAt + 120_000 + EXPIRED_CHALLENGE_GRACE_MS + 1
    expect(await redeem(second, solve(second))).toEqual({ outcome: 'rejected', code: 'challenge_invalid' })
  })

  it('accepts a solution at the last millisecond', async () => {
    const challenge = await issue()
    now = issuedAt + 120_000
    expect(await redeem(challenge, solve(challenge))).toMatchObject({ outcome: 'redeemed' })
  })

  it('refuses a wrong nonce and consumes the challenge', async () => {
    const challenge = await issue()
    const nonce = solve(challenge)
    let wrong = Number(nonce) + 1
    while (verifySolution(challenge, String(wrong))) wrong++
    expect(await redeem(challenge, String(wrong))).toMatchObject({ outcome: 'rejected', code: 'solution_invalid' })
    expect(await redeem(challenge, nonce)).toEqual({ outcome: 'rejected', code: 'challenge_invalid' })
  })
})

describe('chooseDifficulty', () => {
  it('adds two bits per step-up to the site\'s base and stays within 1..32', () => {
    expect(chooseDifficulty({ baseDifficulty: 18, stepUps: 0 })).toBe(18)
    expect(chooseDifficulty({ baseDifficulty: 18, stepUps: 1 })).toBe(20)
    expect(chooseDifficulty({ baseDifficulty: 18, stepUps: 2 })).toBe(22)
    expect(chooseDifficulty({ baseDifficulty: 31, stepUps: 3 })).toBe(MAX_DIFFICULTY)
    expect(chooseDifficulty({ baseDifficulty: 0, stepUps: 0 })).toBe(1)
  })
})
