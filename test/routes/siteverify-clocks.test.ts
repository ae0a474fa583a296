import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '../../src/app.js'
import { redemptionKey } from '../../src/domain/siteverify/redeem-token.js'
import { readToken, TOKEN_LIFETIME_MS } from '../../src/domain/token/token.js'
import { createKeyRing } from '../../src/secret.js'
import { browserHeaders, createTestSite, obtainToken, passVerification, type TestSite } from '../helpers/core-flow.js'
import { hasPostgres, hasRedis } from '../helpers/services.js'
import { buildSharedInstances, type SharedInstances } from '../helpers/shared-instances.js'
import { onClockSkewedBy, restoreClock } from '../helpers/skewed-clock.js'
import { TEST_SECRET } from '../helpers/test-app.js'

const AHEAD_MS = 600_000
const BEHIND_MS = -400_000

/** The challenge a token was issued for, which keys its single-use marker. */
function challengeIdOf(token: string): string {
  const reading = readToken(createKeyRing(TEST_SECRET).macKeyFor('token'), token, 0)
  if (reading.outcome === 'invalid') throw new Error('not a token')
  return reading.claims.challengeId
}

describe.skipIf(!hasPostgres || !hasRedis)('Tokens across instances whose clocks differ, sharing PostgreSQL and Redis', () => {
  let shared: SharedInstances
  let correct: App
  let ahead: App
  let behind: App
  let site: TestSite
  const skews = [0, AHEAD_MS, BEHIND_MS]
  beforeAll(async () => {
    shared = await buildSharedInstances(3, {}, {}, () => ({}), (index) => skews[index] ?? 0)
    ;[correct, ahead, behind] = shared.instances as [App, App, App]
    site = await createTestSite(correct)
  })
  afterAll(async () => {
    await shared.close()
    restoreClock()
  })

  /** `work` at an instance, on its machine's clock. */
  const at = <T>(app: App, work: () => Promise<T>): Promise<T> => onClockSkewedBy(skews[shared.instances.indexOf(app)] ?? 0, work)
  const siteverify = (app: App, response: string) =>
    at(app, async () => (await app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload: { secret: site.secretKey, response } })).json<{ success: boolean; 'error-codes': string[]; challenge_ts?: string }>())
  const tokenFrom = (app: App) => at(app, () => obtainToken(app, browserHeaders(site.siteKey)))

  it('a token from an instance 10 minutes ahead cannot outlive its single-use marker', async () => {
    const response = await tokenFrom(ahead)
    const first = await siteverify(ahead, response)
    expect(first.success).toBe(true)
    // Double redemption needs the marker gone while some instance still takes the token for valid:
    // the marker must live (in Redis's time, which this machine's real clock is) until the token
    // expires at an instance whose clock is right. Stamped by the ahead instance's own clock, the
    // token was valid there until 15 minutes from now, while the marker, sized by that clock,
    // lived 6 minutes: the token redeemed a second time in between (too long to wait for here).
    const markerLeftMs = await correct.keyValue.timeToLive(redemptionKey(challengeIdOf(response)))
    expect(markerLeftMs).not.toBeNull()
    const markerEndsAt = Date.now() + (markerLeftMs ?? 0)
    const validUntilAtCorrect = Date.parse(first.challenge_ts ?? '') + TOKEN_LIFETIME_MS
    expect(markerEndsAt).toBeGreaterThan(validUntilAtCorrect)
    expect(await siteverify(correct, response)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    expect(await siteverify(behind, response)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
  })

  it('a token from an instance 400 s behind redeems at a correct instance, once', async () => {
    const response = await tokenFrom(behind)
    expect((await siteverify(correct, response)).success).toBe(true)
    expect(await siteverify(ahead, response)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
  })

  it("a token from an instance 400 s behind gets the gate's clearance at a correct instance, once", async () => {
    const clear = (app: App, token: string) =>
      at(app, () => app.inject({ method: 'POST', url: '/gate/v1/clearance', headers: { origin: 'https://shop.example.com' }, payload: { siteKey: site.siteKey, token } }))
    const token = await tokenFrom(behind)
    expect((await clear(correct, token)).statusCode).toBe(204)
    expect((await clear(ahead, token)).json()).toMatchObject({ error: { code: 'token_spent' } })
    expect(await siteverify(correct, token)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
  })

  it('stamps a token, and its expiresAt, by Redis\'s clock at any instance', async () => {
    for (const app of [correct, ahead, behind]) {
      const answer = await at(app, () => passVerification(app, browserHeaders(site.siteKey)))
      const { token, expiresAt } = answer.json<{ token: string; expiresAt: string }>()
      const issuedAt = Date.parse((await siteverify(correct, token)).challenge_ts ?? '')
      expect(Math.abs(issuedAt - Date.now())).toBeLessThan(5_000)
      expect(Date.parse(expiresAt)).toBe(issuedAt + TOKEN_LIFETIME_MS)
    }
  })
})

describe.skipIf(!hasPostgres || !hasRedis)('An instance whose clock is off Redis\'s', () => {
  const lines: { level: number; msg: string; clockOffsetMs?: number }[] = []
  let shared: SharedInstances
  const SKEW_MS = 40_000
  beforeAll(async () => {
    const logger = { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) } }
    shared = await buildSharedInstances(2, {}, { logger }, () => ({}), (index) => (index === 0 ? SKEW_MS : 0))
  })
  afterAll(async () => {
    await shared.close()
    restoreClock()
  })

  it('logs a warning beyond half the clock-skew margin and shows the offset in tollgate_clock_offset_seconds', async () => {
    const [skewed, correct] = shared.instances as [App, App]
    const warnings = lines.filter((line) => line.msg.includes("this instance's clock"))
    expect(warnings).toEqual([expect.objectContaining({ level: 40, msg: expect.stringContaining("40 s ahead of Redis's") as string })])
    expect(Math.abs((warnings[0]?.clockOffsetMs ?? 0) - SKEW_MS)).toBeLessThan(1_000)
    const offsetOf = async (app: App, skewMs: number) => {
      const body = (await onClockSkewedBy(skewMs, () => app.inject('/metrics'))).body
      return Number(/^tollgate_clock_offset_seconds (\S+)$/m.exec(body)?.[1])
    }
    expect(Math.abs((await offsetOf(skewed, SKEW_MS)) - SKEW_MS / 1000)).toBeLessThan(1)
    expect(Math.abs(await offsetOf(correct, 0))).toBeLessThan(1)
  })
})
