import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { browserHeaders } from '../helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

interface SurgeAnswer {
  threshold: number
  challengesPerMinute: number
  extraBits: number
  startedAt: string | null
}

describe.each(deployments)('GET /api/v1/sites/{id}/surge ($name)', ({ available, options }) => {
  let service: TestApp
  let owner: TestAccount
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, config: { rateLimitPerMinute: 0 }, surgeFlushIntervalMs: 50 })
    owner = await createTestAccount(service.app)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  const surgeOf = async (siteId: string): Promise<SurgeAnswer> => {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/surge`, headers: asScript(owner) })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<SurgeAnswer>()
  }

  it.skipIf(!available)("shows the site's challenges of the last minute against its threshold, and the surge going on with when it began", { timeout: 30_000 }, async () => {
    const site = await createTestSite(service.app, owner, { name: 'Surging', settings: { difficulty: 4, surgeChallengesPerMinute: 5 } })
    expect(await surgeOf(site.id)).toEqual({ threshold: 5, challengesPerMinute: 0, extraBits: 0, startedAt: null })
    await startWithinOneWindow(60_000, 10_000)
    const before = Date.now()
    for (let visitor = 1; visitor <= 12; visitor += 1) {
      const response = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey), remoteAddress: `10.8.0.${visitor}` })
      expect(response.statusCode).toBe(200)
    }
    let surge = await surgeOf(site.id)
    for (let attempt = 0; attempt < 100 && surge.startedAt === null; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      surge = await surgeOf(site.id)
    }
    // 12 a minute against 5: a bit at 5, another at 10.
    expect(surge).toEqual({ threshold: 5, challengesPerMinute: 12, extraBits: 2, startedAt: expect.stringMatching(/Z$/) })
    expect(Date.parse(surge.startedAt ?? '')).toBeGreaterThanOrEqual(before - 1_000)
    expect(Date.parse(surge.startedAt ?? '')).toBeLessThanOrEqual(Date.now() + 1_000)
  })

  it.skipIf(!available)('counts nothing for a site without surge protection', async () => {
    const site = await createTestSite(service.app, owner, { name: 'Unprotected', settings: { difficulty: 4 } })
    const response = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(site.siteKey), remoteAddress: '10.8.1.1' })
    expect(response.statusCode).toBe(200)
    expect(await surgeOf(site.id)).toEqual({ threshold: 0, challengesPerMinute: 0, extraBits: 0, startedAt: null })
  })
})
