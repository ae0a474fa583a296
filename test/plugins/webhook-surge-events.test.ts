import { verify } from '@octokit/webhooks-methods'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { SurgeAlert } from '../../src/domain/challenge/site-surge.js'
import type { SurgePayload, WebhookEvent } from '../../src/domain/webhooks/webhook-payload.js'
import { browserHeaders } from '../helpers/core-flow.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import { blockedEvent, createWebhookSite } from '../helpers/webhook-site.js'

const SECRET = 'surge receiver secret, plain text'
const THRESHOLD = 5
/**
 * A short window and quiet time, so that a surge ends within seconds: the rate falls to nothing two
 * windows after the last challenge, and the surge is over once nobody has seen it for the quiet time.
 */
const SURGE_TIMING = { windowMs: 2_000, quietMs: 1_000 }

function sampleOf(metrics: string, series: string): number {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

describe.each(deployments)('Surge webhooks ($name)', ({ available, options }) => {
  let service: TestApp
  let receiver: WebhookReceiver
  let visitors = 0
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, config: { rateLimitPerMinute: 0 }, surgeFlushIntervalMs: 50, surgeTiming: SURGE_TIMING })
  })
  afterAll(async () => {
    if (available) await service.close()
  })
  afterEach(async () => {
    if (!available) return
    await service.app.webhooks.settle()
    await receiver?.close()
  })

  async function siteWithEvents(webhookEvents: WebhookEvent[]) {
    return createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET, settings: { difficulty: 4, surgeChallengesPerMinute: THRESHOLD, webhookEvents } })
  }

  /** Challenges of the site from visitors of their own, as fast as they come. */
  async function flood(siteKey: string, count: number): Promise<void> {
    for (let index = 0; index < count; index++) {
      visitors += 1
      const response = await service.app.inject({
        method: 'POST',
        url: '/api/v1/challenge',
        headers: browserHeaders(siteKey),
        remoteAddress: `10.9.${(visitors >> 8) & 255}.${visitors & 255}`,
      })
      expect(response.statusCode).toBe(200)
    }
  }

  /** Resolves with the next alert of the kind for the site that the service emits. */
  function nextAlert(kind: SurgeAlert['kind'], siteId: string, timeoutMs = 15_000): Promise<SurgeAlert> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no surge.${kind} within ${timeoutMs} ms`)), timeoutMs)
      const listener = (alert: SurgeAlert) => {
        if (alert.siteId !== siteId) return
        clearTimeout(timer)
        service.app.events.off(`surge.${kind}`, listener)
        resolve(alert)
      }
      service.app.events.on(`surge.${kind}`, listener)
    })
  }

  it.skipIf(!available)('sends a signed surge.started when the challenge rate reaches the threshold, and surge.ended once it has been quiet', { timeout: 30_000 }, async () => {
    receiver = await startWebhookReceiver()
    const site = await siteWithEvents(['surge.started', 'surge.ended'])
    const metricsBefore = (await service.app.inject({ method: 'GET', url: '/metrics' })).body

    await flood(site.siteKey, 3 * THRESHOLD)
    const started = await receiver.waitForRequest(0, 15_000)
    expect(started.headers['x-service-event']).toBe('surge.started')
    expect(await verify(SECRET, started.body, String(started.headers['x-service-signature']))).toBe(true)
    const startedBody = JSON.parse(started.body) as SurgePayload
    expect(startedBody).toStrictEqual({
      id: started.headers['x-service-delivery'],
      event: 'surge.started',
      siteId: site.id,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { startedAt: startedBody.timestamp, challengesPerMinute: expect.any(Number), threshold: THRESHOLD },
    })
    expect(startedBody.data.challengesPerMinute).toBeGreaterThanOrEqual(THRESHOLD)

    // No more challenges: two windows on the rate is nothing, and the quiet time after that ends it.
    const ended = await receiver.waitForRequest(1, 15_000)
    expect(ended.headers['x-service-event']).toBe('surge.ended')
    expect(await verify(SECRET, ended.body, String(ended.headers['x-service-signature']))).toBe(true)
    const endedBody = JSON.parse(ended.body) as SurgePayload
    expect(endedBody).toMatchObject({ event: 'surge.ended', siteId: site.id, data: { startedAt: startedBody.timestamp, threshold: THRESHOLD } })
    expect(endedBody.data.challengesPerMinute).toBeLessThan(THRESHOLD)
    expect(Date.parse(endedBody.timestamp) - Date.parse(startedBody.timestamp)).toBeGreaterThanOrEqual(SURGE_TIMING.quietMs)

    await service.app.webhooks.settle()
    // The first two deliveries (a machine that stalled for seconds may have seen a second surge since).
    const logged = (await service.app.webhooks.deliveries.listRecent(site.id, 10)).reverse().slice(0, 2)
    expect(logged.map((delivery) => [delivery.id, delivery.event, delivery.outcome])).toEqual([
      [startedBody.id, 'surge.started', 'delivered'],
      [endedBody.id, 'surge.ended', 'delivered'],
    ])
    const metrics = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    for (const kind of ['started', 'ended']) {
      const series = `tollgate_surges_total{kind="${kind}"}`
      expect(sampleOf(metrics, series) - sampleOf(metricsBefore, series)).toBeGreaterThanOrEqual(1)
    }
  })

  it.skipIf(!available)("sends only the events a site's webhook asks for: surges are not sent by default, blocks not when left out", { timeout: 30_000 }, async () => {
    receiver = await startWebhookReceiver()
    const byDefault = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET, settings: { difficulty: 4, surgeChallengesPerMinute: THRESHOLD } })
    expect(byDefault.settings.webhookEvents).toEqual(['verification.blocked'])
    const surgesOnly = await siteWithEvents(['surge.started'])

    const began = nextAlert('started', byDefault.id)
    await flood(byDefault.siteKey, 2 * THRESHOLD)
    await began
    service.app.events.emit('verification.blocked', blockedEvent(surgesOnly.id))
    service.app.events.emit('verification.blocked', blockedEvent(byDefault.id))
    await receiver.waitForRequest(0)
    await service.app.webhooks.settle()
    expect(receiver.received.map((request) => [request.headers['x-service-event'], (JSON.parse(request.body) as { siteId: string }).siteId])).toEqual([['verification.blocked', byDefault.id]])
  })

  it.skipIf(!available)('puts a surge alert ahead of the blocked verifications waiting for the site\'s slots, and drops none', { timeout: 60_000 }, async () => {
    receiver = await startWebhookReceiver()
    receiver.behave({ status: 204, delayMs: 500 })
    const site = await siteWithEvents(['verification.blocked', 'surge.started'])
    // 10 in flight, the line of 100 full: the next blocked verification would be dropped.
    for (let index = 0; index < 110; index += 1) service.app.events.emit('verification.blocked', blockedEvent(site.id))
    const alert: SurgeAlert = { kind: 'started', siteId: site.id, at: new Date(), startedAt: new Date(), challengesPerMinute: 50, threshold: THRESHOLD }
    service.app.events.emit('surge.started', alert)
    await receiver.waitForRequest(10, 15_000)
    await service.app.webhooks.settle()
    const events = receiver.received.map((request) => request.headers['x-service-event'])
    expect(events).toHaveLength(111)
    // The first ten were in flight already; the alert starts with the next round of ten (their
    // requests may reach the receiver in any order), not behind the hundred that waited before it.
    expect(events.indexOf('surge.started')).toBeGreaterThanOrEqual(10)
    expect(events.indexOf('surge.started')).toBeLessThan(20)
    const logged = await service.app.webhooks.deliveries.listRecent(site.id, 200)
    expect(logged.filter((delivery) => delivery.outcome === 'dropped')).toEqual([])
  })
})

describe('Surge webhooks at shutdown', () => {
  it('still sends an alert that comes as shutdown begins, while blocked verifications then are dropped', { timeout: 60_000 }, async () => {
    let slowRequestArrived!: () => void
    const arrived = new Promise<void>((resolve) => (slowRequestArrived = resolve))
    const closing = await buildTestApp({
      // A request that keeps the server open for a while after shutdown began.
      beforeReady: (app) =>
        app.get('/test/slow', async () => {
          slowRequestArrived()
          await new Promise((resolve) => setTimeout(resolve, 2_000))
          return 'done'
        }),
    })
    const address = await closing.app.listen({ port: 0, host: '127.0.0.1' })
    const receiver = await startWebhookReceiver()
    try {
      const site = await createWebhookSite(closing.app, { webhookUrl: receiver.url, secret: SECRET, settings: { webhookEvents: ['verification.blocked', 'surge.ended'] } })
      const slow = fetch(`${address}/test/slow`)
      await arrived
      const closed = closing.close()
      // Shutdown has begun (its first step drops what waits); the server waits for the slow request.
      await new Promise((resolve) => setTimeout(resolve, 300))
      const alert: SurgeAlert = { kind: 'ended', siteId: site.id, at: new Date(), startedAt: new Date(Date.now() - 60_000), challengesPerMinute: 1, threshold: THRESHOLD }
      closing.app.events.emit('surge.ended', alert)
      closing.app.events.emit('verification.blocked', blockedEvent(site.id))
      await closed
      expect(await (await slow).text()).toBe('done')
      expect(receiver.received.map((request) => request.headers['x-service-event'])).toEqual(['surge.ended'])
    } finally {
      await receiver.close()
    }
  })
})
