import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  defaultHistoryPolicy, fingerprintClientLimitFor, lastHourOf, recordAndAssessHistory, recordChallengeRequest, recordFraudulentLabel, recordOutcome,
  type HistoryPolicy,
} from '../../../src/domain/history/client-history.js'
import { advanceStepUps, claimStepUps } from '../../../src/domain/risk/step-up.js'
import type { KeyValueStore } from '../../../src/storage/ports.js'
import { keyValueKinds, openTestKeyValue, type TestKeyValue } from '../../helpers/storage.js'

const policy: HistoryPolicy = { ...defaultHistoryPolicy, rateLimit: 5, blockLimit: 2, fingerprintClientLimit: 3 }
const now = Date.UTC(2026, 0, 1, 12, 0, 30)
const site = 'site-a'

describe.each(keyValueKinds)('client history on $kind', ({ kind, available }) => {
  let testStore: TestKeyValue
  let store: KeyValueStore

  beforeEach(async (context) => {
    if (!available) context.skip()
    testStore = await openTestKeyValue(kind)
    store = testStore.keyValue
  })

  afterEach(async () => {
    if (!available) return
    await store.close()
    await testStore.dispose()
  })

  it('says nothing about a new client', async () => {
    expect(await recordChallengeRequest(store, { siteId: site, client: 'c1' }, now, policy)).toEqual({ anomalies: [], extraDifficulty: 0, stepUps: 0, stepUpRound: '' })
    expect(await recordAndAssessHistory(store, { siteId: site, client: 'c1', fingerprint: 'f1' }, now, policy)).toEqual({ anomalies: [], extraDifficulty: 0 })
  })

  it('flags a client above the request rate, per site, and forgets it in the next window', async () => {
    const results = []
    for (let i = 0; i < 6; i++) results.push(await recordChallengeRequest(store, { siteId: site, client: 'c1' }, now, policy))
    expect(results.slice(0, 5).every((result) => result.anomalies.length === 0)).toBe(true)
    expect(results[5]).toEqual({ anomalies: ['high_request_rate'], extraDifficulty: 2, stepUps: 0, stepUpRound: '' })
    // The verification that follows sees the same rate.
    expect((await recordAndAssessHistory(store, { siteId: site, client: 'c1', fingerprint: undefined }, now, policy)).anomalies).toEqual(['high_request_rate'])
    expect((await recordChallengeRequest(store, { siteId: 'site-b', client: 'c1' }, now, policy)).anomalies).toEqual([])
    expect((await recordChallengeRequest(store, { siteId: site, client: 'c2' }, now, policy)).anomalies).toEqual([])
    expect((await recordChallengeRequest(store, { siteId: site, client: 'c1' }, now + 60_000, policy)).anomalies).toEqual([])
  })

  it('adds very_high_request_rate above the second limit, and forgets it in the next window', async () => {
    const steep = { ...policy, rateLimit: 5, veryHighRateLimit: 10 }
    const results = []
    for (let i = 0; i < 11; i++) results.push((await recordChallengeRequest(store, { siteId: site, client: 'c1' }, now, steep)).anomalies)
    expect(results[9]).toEqual(['high_request_rate'])
    expect(results[10]).toEqual(['high_request_rate', 'very_high_request_rate'])
    expect((await recordAndAssessHistory(store, { siteId: site, client: 'c1', fingerprint: undefined }, now, steep)).anomalies).toEqual(['high_request_rate', 'very_high_request_rate'])
    expect((await recordChallengeRequest(store, { siteId: site, client: 'c1' }, now + 60_000, steep)).anomalies).toEqual([])
  })

  it('flags a client with recent blocks, and only blocks count', async () => {
    await recordOutcome(store, { siteId: site, client: 'c1' }, 'allow', policy, now)
    await recordOutcome(store, { siteId: site, client: 'c1' }, 'challenge', policy, now)
    await recordOutcome(store, { siteId: site, client: 'c1' }, 'block', policy, now)
    expect((await recordChallengeRequest(store, { siteId: site, client: 'c1' }, now, policy)).anomalies).toEqual([])
    await recordOutcome(store, { siteId: site, client: 'c1' }, 'block', policy, now)
    expect(await recordChallengeRequest(store, { siteId: site, client: 'c1' }, now, policy)).toEqual({ anomalies: ['recent_blocks'], extraDifficulty: 2, stepUps: 0, stepUpRound: '' })
    expect((await recordAndAssessHistory(store, { siteId: site, client: 'c1', fingerprint: 'f1' }, now, policy)).anomalies).toEqual(['recent_blocks'])
    expect((await recordChallengeRequest(store, { siteId: site, client: 'c2' }, now, policy)).anomalies).toEqual([])
  })

  it("counts a fraudulent label against the client only while the verification is recent (two block windows): the address may have changed hands", async () => {
    const oldest = now - 2 * policy.blockWindowMs
    expect(await recordFraudulentLabel(store, { siteId: site, client: 'c1', verifiedAt: new Date(oldest) }, policy, now)).toBe(false)
    expect((await recordChallengeRequest(store, { siteId: site, client: 'c1' }, now, policy)).anomalies).toEqual([])
    expect(await recordFraudulentLabel(store, { siteId: site, client: 'c1', verifiedAt: new Date(oldest + 1_000) }, policy, now)).toBe(true)
    expect((await recordChallengeRequest(store, { siteId: site, client: 'c1' }, now, policy)).anomalies).toEqual(['recent_blocks'])
  })

  it('counts two blocks a few seconds apart together, also across the edge of a 15-minute window', async () => {
    const windowEnd = (Math.floor(now / policy.blockWindowMs) + 1) * policy.blockWindowMs
    const client = { siteId: site, client: 'edge' }
    await recordOutcome(store, client, 'block', policy, windowEnd - 1_000)
    await recordOutcome(store, client, 'block', policy, windowEnd + 1_000)
    expect((await recordAndAssessHistory(store, { ...client, fingerprint: undefined }, windowEnd + 2_000, policy)).anomalies).toEqual(['recent_blocks'])
    expect((await recordChallengeRequest(store, client, windowEnd + 2_000, policy)).anomalies).toEqual(['recent_blocks'])
    // A block counts for at least 15 minutes: still there at the end of the next window, gone after.
    expect((await recordChallengeRequest(store, client, windowEnd + policy.blockWindowMs - 1, policy)).anomalies).toEqual(['recent_blocks'])
    expect((await recordChallengeRequest(store, client, windowEnd + 2 * policy.blockWindowMs, policy)).anomalies).toEqual([])
  })

  it('raises the next challenges of a client whose fingerprint was seen from too many addresses', async () => {
    for (const client of ['s1', 's2', 's3']) await recordAndAssessHistory(store, { siteId: site, client, fingerprint: 'farmed' }, now, policy)
    expect(await recordChallengeRequest(store, { siteId: site, client: 's3' }, now, policy)).toEqual({
      anomalies: ['fingerprint_many_ips'], extraDifficulty: 1, stepUps: 0, stepUpRound: '',
    })
    // The clients seen before the limit was reached are not flagged until they are seen again.
    expect((await recordChallengeRequest(store, { siteId: site, client: 's1' }, now, policy)).anomalies).toEqual([])
  })

  it('flags a fingerprint seen from many distinct clients, counting each client once', async () => {
    const seenFrom = (client: string) => recordAndAssessHistory(store, { siteId: site, client, fingerprint: 'shared' }, now, policy)
    expect((await seenFrom('c1')).anomalies).toEqual([])
    expect((await seenFrom('c1')).anomalies).toEqual([])
    expect((await seenFrom('c2')).anomalies).toEqual([])
    expect((await seenFrom('c2')).anomalies).toEqual([])
    expect(await seenFrom('c3')).toEqual({ anomalies: ['fingerprint_many_ips'], extraDifficulty: 1 })
    // Every client using it is flagged from then on, including the first.
    expect((await seenFrom('c1')).anomalies).toEqual(['fingerprint_many_ips'])
    // Another fingerprint and the same fingerprint on another site are unaffected.
    expect((await recordAndAssessHistory(store, { siteId: site, client: 'c3', fingerprint: 'own' }, now, policy)).anomalies).toEqual([])
    expect((await recordAndAssessHistory(store, { siteId: 'site-b', client: 'c3', fingerprint: 'shared' }, now, policy)).anomalies).toEqual([])
  })

  it("raises a busy site's limit to its share of the site's traffic, asking for the traffic only from the fixed limit on", async () => {
    let asked = 0
    const siteTraffic = async () => {
      asked++
      return 100
    }
    // 5% of 100 scored verifications in the last hour is 5 clients, above the fixed limit of 3.
    const seenFrom = (client: string) => recordAndAssessHistory(store, { siteId: site, client, fingerprint: 'popular', siteTraffic }, now, policy)
    expect((await seenFrom('p1')).anomalies).toEqual([])
    expect((await seenFrom('p2')).anomalies).toEqual([])
    expect(asked).toBe(0)
    expect((await seenFrom('p3')).anomalies).toEqual([])
    expect((await seenFrom('p4')).anomalies).toEqual([])
    expect(await seenFrom('p5')).toEqual({ anomalies: ['fingerprint_many_ips'], extraDifficulty: 1 })
    expect(asked).toBe(3)
  })

  it('estimates the last hour from the current and the previous hour, and takes the larger of the two limits', () => {
    const hour = 3_600_000
    expect(lastHourOf({ current: 40, previous: 100 }, 10 * hour)).toBe(140)
    expect(lastHourOf({ current: 40, previous: 100 }, 10 * hour + hour / 4)).toBe(115)
    expect(lastHourOf({ current: 40, previous: 100 }, 11 * hour - 1)).toBe(40)
    expect(fingerprintClientLimitFor(0)).toBe(20)
    expect(fingerprintClientLimitFor(400)).toBe(20)
    expect(fingerprintClientLimitFor(401)).toBe(21)
    expect(fingerprintClientLimitFor(20_000)).toBe(1_000)
  })

  it('caps the extra difficulty when several labels hold', async () => {
    for (let i = 0; i < 6; i++) await recordChallengeRequest(store, { siteId: site, client: 'c1' }, now, policy)
    await recordOutcome(store, { siteId: site, client: 'c1' }, 'block', policy, now)
    await recordOutcome(store, { siteId: site, client: 'c1' }, 'block', policy, now)
    const result = await recordChallengeRequest(store, { siteId: site, client: 'c1' }, now, policy)
    expect(result).toEqual({ anomalies: ['high_request_rate', 'recent_blocks'], extraDifficulty: 4, stepUps: 0, stepUpRound: '' })
  })

  it('reads the pending step-ups with the request count, per site and client, until a verdict ends them', async () => {
    const client = { siteId: site, client: 'c1' }
    await advanceStepUps(store, client, 'challenge', 0)
    const first = await recordChallengeRequest(store, client, now, policy)
    expect(first).toMatchObject({ stepUps: 1, stepUpRound: expect.stringMatching(/^[0-9a-f]{10}$/) })
    await advanceStepUps(store, client, 'challenge', 1)
    const second = await recordChallengeRequest(store, client, now, policy)
    // Each round has an id of its own, which the challenges issued in it carry.
    expect(second.stepUps).toBe(2)
    expect(second.stepUpRound).not.toBe(first.stepUpRound)
    expect((await recordChallengeRequest(store, { siteId: 'site-b', client: 'c1' }, now, policy)).stepUps).toBe(0)
    expect((await recordChallengeRequest(store, { siteId: site, client: 'c2' }, now, policy)).stepUps).toBe(0)
    // The verification of a challenge issued in that round takes it; its allow opens no new one.
    expect(await claimStepUps(store, client, { stepUps: second.stepUps, stepUpRound: second.stepUpRound })).toBe(2)
    await advanceStepUps(store, client, 'allow', 2)
    expect((await recordChallengeRequest(store, client, now, policy)).stepUps).toBe(0)
    // A challenge of a round that is no longer pending earns nothing.
    expect(await claimStepUps(store, client, { stepUps: second.stepUps, stepUpRound: second.stepUpRound })).toBe(0)
  })
})
