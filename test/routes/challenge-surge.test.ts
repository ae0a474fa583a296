import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { App } from '../../src/app.js'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserHeaders, createTestSite, humanSubmission, submitSolution, type TestSite } from '../helpers/core-flow.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { hasPostgres, hasRedis } from '../helpers/services.js'
import { buildSharedInstances, type SharedInstances } from '../helpers/shared-instances.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

/** Surge counts are kept per minute of the store's clock: a test's requests must fall in one. */
const SURGE_WINDOW_MS = 60_000

let visitors = 0
/** A challenge for a visitor of its own (its own address), so that no client's history raises it. */
async function challengeOfNewVisitor(app: App, siteKey: string): Promise<Challenge> {
  visitors += 1
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/challenge',
    headers: browserHeaders(siteKey),
    remoteAddress: `10.${(visitors >> 16) & 255}.${(visitors >> 8) & 255}.${visitors & 255}`,
  })
  expect(response.statusCode).toBe(200)
  return response.json<Challenge>()
}

async function difficultiesOf(app: App, siteKey: string, count: number): Promise<number[]> {
  const difficulties: number[] = []
  for (let index = 0; index < count; index++) difficulties.push((await challengeOfNewVisitor(app, siteKey)).difficulty)
  return difficulties
}

function sampleOf(metrics: string, series: string): number {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

describe.each(deployments)('Surge protection ($name)', ({ available, options }) => {
  let service: TestApp
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, config: { rateLimitPerMinute: 0 } })
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  it.skipIf(!available)('raises every challenge of a site over its threshold: a bit at it, one more per doubling, at most four', async () => {
    const site = await createTestSite(service.app, { settings: { difficulty: 4, surgeChallengesPerMinute: 5 } })
    await startWithinOneWindow(SURGE_WINDOW_MS, 10_000)
    const difficulties = await difficultiesOf(service.app, site.siteKey, 90)
    // The 5th request of the minute reaches the threshold, the 10th doubles it, and so on.
    const expected = difficulties.map((_, index) => 4 + Math.min(4, index + 1 < 5 ? 0 : 1 + Math.floor(Math.log2((index + 1) / 5))))
    expect(difficulties).toEqual(expected)
    expect(difficulties.slice(0, 4)).toEqual([4, 4, 4, 4])
    expect(difficulties.at(-1)).toBe(8)
  })

  it.skipIf(!available)('leaves a site without a threshold, and a quiet site with one, at their own difficulty', async () => {
    const unprotected = await createTestSite(service.app, { settings: { difficulty: 5 } })
    const quiet = await createTestSite(service.app, { settings: { difficulty: 5, surgeChallengesPerMinute: 1_000 } })
    await startWithinOneWindow(SURGE_WINDOW_MS, 10_000)
    expect(new Set(await difficultiesOf(service.app, unprotected.siteKey, 40))).toEqual(new Set([5]))
    expect(new Set(await difficultiesOf(service.app, quiet.siteKey, 40))).toEqual(new Set([5]))
  })

  it.skipIf(!available)('a surged challenge verifies as any other, and the surge does not raise the score', async () => {
    const calm = await createTestSite(service.app, { settings: { difficulty: 4, challengeThreshold: 90, blockThreshold: 100 } })
    const surging = await createTestSite(service.app, { settings: { difficulty: 4, surgeChallengesPerMinute: 2, challengeThreshold: 90, blockThreshold: 100 } })
    await startWithinOneWindow(SURGE_WINDOW_MS, 10_000)
    await difficultiesOf(service.app, surging.siteKey, 10)
    const verdicts = []
    for (const site of [calm, surging]) {
      const challenge = await challengeOfNewVisitor(service.app, site.siteKey)
      const response = await submitSolution(service.app, browserHeaders(site.siteKey), humanSubmission(challenge))
      expect(response.statusCode).toBe(200)
      verdicts.push({ difficulty: challenge.difficulty, ...response.json<{ success: boolean; riskScore: number }>() })
    }
    const [calmVerdict, surgingVerdict] = verdicts
    expect(calmVerdict).toMatchObject({ difficulty: 4, success: true })
    expect(surgingVerdict).toMatchObject({ difficulty: 4 + 3, success: true, riskScore: calmVerdict?.riskScore })
  })

  it.skipIf(!available)('counts only the challenges it issued: requests that failed (the store away) are not a surge', async () => {
    const site = await createTestSite(service.app, { settings: { difficulty: 4, surgeChallengesPerMinute: 3 } })
    await startWithinOneWindow(SURGE_WINDOW_MS, 10_000)
    // The store refuses the challenge's record as a Redis that went away does (a forced failure).
    const refused = vi.spyOn(service.app.keyValue, 'set').mockRejectedValue(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))
    try {
      for (let index = 0; index < 5; index++) {
        const response = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey), remoteAddress: `10.9.0.${index + 1}` })
        expect(response.statusCode).toBe(503)
      }
    } finally {
      refused.mockRestore()
    }
    expect(await difficultiesOf(service.app, site.siteKey, 4)).toEqual([4, 4, 5, 5])
  })

  it.skipIf(!available)('counts the surged challenges in /metrics by the bits added', async () => {
    const site = await createTestSite(service.app, { settings: { difficulty: 4, surgeChallengesPerMinute: 3 } })
    const metrics = async () => (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    const series = ['1', '2'].map((bits) => `tollgate_challenges_surged_total{bits="${bits}"}`)
    await startWithinOneWindow(SURGE_WINDOW_MS, 10_000)
    const before = await metrics()
    await difficultiesOf(service.app, site.siteKey, 8)
    const after = await metrics()
    // Requests 3 to 5 add one bit, 6 to 8 two.
    expect(series.map((name) => sampleOf(after, name) - sampleOf(before, name))).toEqual([3, 3])
  })
})

describe.skipIf(!hasPostgres || !hasRedis)('Surge protection across instances sharing PostgreSQL and Redis', () => {
  let shared: SharedInstances
  let first: App
  let second: App
  let site: TestSite
  beforeAll(async () => {
    // The instances share their counts when the test says, not every second.
    shared = await buildSharedInstances(2, {}, { surgeFlushIntervalMs: 3_600_000 })
    ;[first, second] = shared.instances as [App, App]
    site = await createTestSite(first, { settings: { difficulty: 4, surgeChallengesPerMinute: 20 } })
  })
  afterAll(() => shared.close())

  it('each instance raises the site\'s challenges for the requests all of them served', async () => {
    await startWithinOneWindow(SURGE_WINDOW_MS, 10_000)
    // Each instance alone stays under the threshold...
    expect(new Set(await difficultiesOf(first, site.siteKey, 12))).toEqual(new Set([4]))
    expect(new Set(await difficultiesOf(second, site.siteKey, 12))).toEqual(new Set([4]))
    // ...and once they have shared their counts (every second in service), both see 24.
    await first.surge.flush()
    await second.surge.flush()
    await first.surge.flush()
    expect((await challengeOfNewVisitor(first, site.siteKey)).difficulty).toBe(5)
    expect((await challengeOfNewVisitor(second, site.siteKey)).difficulty).toBe(5)
  })

  it('hands an instance\'s last counts to the others when it shuts down', async () => {
    const pair = await buildSharedInstances(2, {}, { surgeFlushIntervalMs: 3_600_000 })
    try {
      const [leaving, staying] = pair.instances as [App, App]
      const shared = await createTestSite(leaving, { settings: { difficulty: 4, surgeChallengesPerMinute: 10 } })
      await startWithinOneWindow(SURGE_WINDOW_MS, 10_000)
      expect(new Set(await difficultiesOf(leaving, shared.siteKey, 8))).toEqual(new Set([4]))
      await leaving.close()
      // The one that stays counts one and learns of the 8 at its flush: the next is the 10th.
      expect((await challengeOfNewVisitor(staying, shared.siteKey)).difficulty).toBe(4)
      await staying.surge.flush()
      expect((await challengeOfNewVisitor(staying, shared.siteKey)).difficulty).toBe(5)
    } finally {
      await pair.close()
    }
  })
})
