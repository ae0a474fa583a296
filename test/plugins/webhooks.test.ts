import { verify } from '@octokit/webhooks-methods'
import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { toStandardWebhooksSecret } from '../../src/domain/webhooks/sign-webhook.js'
import { browserHeaders, fetchChallenge, humanSubmission, submitSolution } from '../helpers/core-flow.js'
import { hasPostgres } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { findClosedPort, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import { blockedEvent, createWebhookSite } from '../helpers/webhook-site.js'

const SECRET = 'receiver shared secret, plain text'
/**
 * Long enough that a test process busy elsewhere (the suite runs files in parallel) still writes
 * the request before the timeout fires: at 500 ms a receiver once got no request at all in a full
 * run of the suite on a slow machine (the timer fired before the connection was made).
 */
const SHORT_TIMEOUT_MS = 900
/**
 * The shutdown tests' delivery timeout: shutdown must begin while the ten deliveries are still in
 * flight, or a slot that a timeout freed lets an eleventh start before it (a full CI run once took
 * longer than 900 ms from the tenth delivery's arrival to the close).
 */
const SHUTDOWN_TIMEOUT_MS = 3_000

async function metricsText(service: TestApp): Promise<string> {
  return (await service.app.inject({ method: 'GET', url: '/metrics' })).body
}

function deliveryCount(metrics: string, outcome: string): number {
  const match = new RegExp(`^tollgate_webhook_deliveries_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(metrics)
  return match === null ? 0 : Number(match[1])
}

describe('verification.blocked webhooks', () => {
  let service: TestApp
  let receiver: WebhookReceiver
  beforeAll(async () => {
    service = await buildTestApp({ database: hasPostgres ? 'postgres' : 'pglite', webhookTimeoutMs: SHORT_TIMEOUT_MS })
  })
  afterAll(() => service.close())
  afterEach(async () => {
    vi.restoreAllMocks()
    await service.app.webhooks.settle()
    await receiver?.close()
  })

  it('POSTs the spec payload, signed both ways, and records the delivery', async () => {
    receiver = await startWebhookReceiver()
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })

    service.app.events.emit('verification.blocked', blockedEvent(site.id))
    const request = await receiver.waitForRequest()

    const deliveryId = request.headers['x-service-delivery']
    expect(JSON.parse(request.body)).toStrictEqual({
      id: deliveryId,
      event: 'verification.blocked',
      siteId: site.id,
      timestamp: '2025-06-07T08:09:10.111Z',
      data: {
        riskScore: 91,
        anomalies: ['datacenter_ip', 'vpn_detected'],
        countryCode: 'NL',
        verificationId: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
        device: '9f8e7d6c5b4a39281706f5e4',
        hostname: 'shop.example',
        pageAction: 'login',
      },
    })
    expect(request.headers['content-type']).toBe('application/json')
    expect(request.headers['x-service-event']).toBe('verification.blocked')
    expect(deliveryId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(request.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/)
    expect(await verify(SECRET, request.body, String(request.headers['x-service-signature']))).toBe(true)
    expect(await verify('a wrong secret', request.body, String(request.headers['x-service-signature']))).toBe(false)
    expect(request.headers['webhook-id']).toBe(deliveryId)
    const standard = new Webhook(toStandardWebhooksSecret(SECRET))
    expect(standard.verify(request.body, request.headers as Record<string, string>)).toStrictEqual(JSON.parse(request.body))

    await service.app.webhooks.settle()
    const [delivery] = await service.app.webhooks.deliveries.listRecent(site.id, 10)
    expect(delivery).toMatchObject({
      id: deliveryId,
      event: 'verification.blocked',
      url: receiver.url,
      isTest: false,
      outcome: 'delivered',
      statusCode: 204,
      error: null,
    })
    expect(delivery?.latencyMs).toBeGreaterThanOrEqual(0)
    expect(deliveryCount(await metricsText(service), 'delivered')).toBeGreaterThanOrEqual(1)
  })

  it('returns to the emitter at once while the receiver never answers; records a timeout', async () => {
    receiver = await startWebhookReceiver()
    receiver.behave('hang')
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })
    const warn = vi.spyOn(service.app.log, 'warn')

    const started = performance.now()
    service.app.events.emit('verification.blocked', blockedEvent(site.id))
    expect(performance.now() - started).toBeLessThan(100)

    await receiver.waitForRequest()
    await service.app.webhooks.settle()
    const [delivery] = await service.app.webhooks.deliveries.listRecent(site.id, 10)
    expect(delivery).toMatchObject({ outcome: 'timeout', statusCode: null, error: `no answer within ${SHORT_TIMEOUT_MS} ms` })
    expect(delivery?.latencyMs).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS - 5)
    expect(delivery?.latencyMs).toBeLessThan(SHORT_TIMEOUT_MS + 1_000)
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ siteId: site.id, deliveryId: delivery?.id, outcome: 'timeout' }), 'webhook delivery failed')
  })

  it('records a non-2xx answer as failed with its status', async () => {
    receiver = await startWebhookReceiver()
    receiver.behave({ status: 500 })
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })

    service.app.events.emit('verification.blocked', blockedEvent(site.id))
    await receiver.waitForRequest()
    await service.app.webhooks.settle()

    expect(await service.app.webhooks.deliveries.listRecent(site.id, 10)).toMatchObject([
      { outcome: 'failed', statusCode: 500, error: 'the receiver answered HTTP 500' },
    ])
  })

  it('records a receiver that is down as failed, logged with the site and delivery id', async () => {
    const port = await findClosedPort()
    const site = await createWebhookSite(service.app, { webhookUrl: `http://127.0.0.1:${port}/hook`, secret: SECRET })
    const warn = vi.spyOn(service.app.log, 'warn')
    const before = deliveryCount(await metricsText(service), 'failed')

    expect(() => service.app.events.emit('verification.blocked', blockedEvent(site.id))).not.toThrow()
    await service.app.webhooks.settle()

    const [delivery] = await service.app.webhooks.deliveries.listRecent(site.id, 10)
    expect(delivery).toMatchObject({ outcome: 'failed', statusCode: null, error: expect.stringContaining('ECONNREFUSED') })
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ siteId: site.id, deliveryId: delivery?.id, outcome: 'failed', error: expect.stringContaining('ECONNREFUSED') }),
      'webhook delivery failed',
    )
    expect(deliveryCount(await metricsText(service), 'failed')).toBe(before + 1)
  })

  it("leaves test sends out of tollgate_webhook_deliveries_total (the alert's counter); real events count", async () => {
    const port = await findClosedPort()
    const site = await createWebhookSite(service.app, { webhookUrl: `http://127.0.0.1:${port}/hook`, secret: SECRET })
    const before = await metricsText(service)

    const tests = await Promise.all([1, 2, 3].map(() => service.app.webhooks.sendTest(site)))

    expect(tests).toMatchObject([1, 2, 3].map(() => ({ outcome: 'failed', isTest: true })))
    const afterTests = await metricsText(service)
    for (const outcome of ['failed', 'delivered', 'timeout', 'refused']) expect(deliveryCount(afterTests, outcome)).toBe(deliveryCount(before, outcome))
    service.app.events.emit('verification.blocked', blockedEvent(site.id))
    await service.app.webhooks.settle()
    expect(deliveryCount(await metricsText(service), 'failed')).toBe(deliveryCount(before, 'failed') + 1)
  })

  it('sends nothing for a site without a webhook URL', async () => {
    receiver = await startWebhookReceiver()
    const site = await createWebhookSite(service.app, { webhookUrl: null, secret: SECRET })

    service.app.events.emit('verification.blocked', blockedEvent(site.id))
    await service.app.webhooks.settle()

    expect(receiver.received).toHaveLength(0)
    expect(await service.app.webhooks.deliveries.listRecent(site.id, 10)).toEqual([])
  })

  it('never sends unsigned: a site without a secret gets a refused record', async () => {
    receiver = await startWebhookReceiver()
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url })

    service.app.events.emit('verification.blocked', blockedEvent(site.id))
    await service.app.webhooks.settle()

    expect(receiver.received).toHaveLength(0)
    expect(await service.app.webhooks.deliveries.listRecent(site.id, 10)).toMatchObject([
      { outcome: 'refused', error: expect.stringMatching(/no webhook secret/) },
    ])
  })

  it('a secret sealed under another key is refused: nothing is sent', async () => {
    receiver = await startWebhookReceiver()
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })
    await service.app.sites.update(site.id, { webhookSecretCiphertext: 'v1.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA' })

    service.app.events.emit('verification.blocked', blockedEvent(site.id))
    await service.app.webhooks.settle()

    expect(receiver.received).toHaveLength(0)
    expect(await service.app.webhooks.deliveries.listRecent(site.id, 10)).toMatchObject([
      { outcome: 'refused', statusCode: null, error: expect.stringMatching(/cannot be decrypted/) },
    ])
  })

  it('a failure before sending (the site lookup) never reaches the emitter', async () => {
    const site = await createWebhookSite(service.app, { webhookUrl: 'http://127.0.0.1:9/', secret: SECRET })
    vi.spyOn(service.app.siteCache, 'findById').mockRejectedValue(new Error('database down'))
    const logged = vi.spyOn(service.app.log, 'error')

    expect(() => service.app.events.emit('verification.blocked', blockedEvent(site.id))).not.toThrow()
    await service.app.webhooks.settle()

    expect(logged).toHaveBeenCalledWith(expect.objectContaining({ siteId: site.id }), 'webhook dispatch failed')
  })

  it('counts an event whose site cannot be read as dropped', async () => {
    const site = await createWebhookSite(service.app, { webhookUrl: 'http://127.0.0.1:9/', secret: SECRET })
    vi.spyOn(service.app.siteCache, 'findById').mockRejectedValue(new Error('database down'))
    const before = deliveryCount(await metricsText(service), 'dropped')

    service.app.events.emit('verification.blocked', blockedEvent(site.id))
    await service.app.webhooks.settle()

    expect(deliveryCount(await metricsText(service), 'dropped')).toBe(before + 1)
  })

  it('sends the webhook of a blocked verification while the site cannot be read from the database', async () => {
    receiver = await startWebhookReceiver()
    const site = await createWebhookSite(service.app, {
      webhookUrl: receiver.url,
      secret: SECRET,
      settings: { difficulty: 4, challengeThreshold: 0, blockThreshold: 0 },
    })
    const headers = browserHeaders(site.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    vi.spyOn(service.app.siteCache, 'findById').mockRejectedValue(new Error('database down'))

    const verdict = await submitSolution(service.app, headers, humanSubmission(challenge))
    expect(verdict.json()).toMatchObject({ success: false, action: 'block' })

    const delivered = await receiver.waitForRequest(0)
    expect(JSON.parse(delivered.body)).toMatchObject({ event: 'verification.blocked', siteId: site.id })
  })

  it('caps the deliveries in flight per site; events wait for a slot, and those beyond the line are dropped and counted', { timeout: 30_000 }, async () => {
    receiver = await startWebhookReceiver()
    receiver.behave('hang')
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })
    const droppedBefore = deliveryCount(await metricsText(service), 'dropped')

    // 10 in flight, 100 waiting, 5 over.
    for (let index = 0; index < 115; index += 1) service.app.events.emit('verification.blocked', blockedEvent(site.id))
    await receiver.waitForRequest(9)
    expect(receiver.received).toHaveLength(10)
    await service.app.webhooks.settle()

    expect(receiver.received).toHaveLength(110)
    const logged = await service.app.webhooks.deliveries.listRecent(site.id, 200)
    expect(logged.filter((delivery) => delivery.outcome === 'timeout')).toHaveLength(110)
    // The site's own log says so too: one entry for the minute (cut short by settle), with all five.
    expect(logged.filter((delivery) => delivery.outcome === 'dropped')).toEqual([
      expect.objectContaining({
        outcome: 'dropped',
        url: receiver.url,
        error: expect.stringMatching(/^5 event\(s\) dropped since \d{4}-\d\d-\d\dT[\d:.]+Z \(100 events waiting behind 10 deliveries in flight for this site\)$/),
      }),
    ])
    expect(deliveryCount(await metricsText(service), 'dropped')).toBe(droppedBefore + 5)
  })

  it('delivers a burst to a slow receiver in full, in order, ten at a time', { timeout: 60_000 }, async () => {
    // A timeout of its own: under a loaded CI run a 150 ms answer may take longer than the suite's 500 ms.
    const patient = await buildTestApp({ webhookTimeoutMs: 10_000 })
    receiver = await startWebhookReceiver()
    try {
      receiver.behave({ status: 200, delayMs: 150 })
      const site = await createWebhookSite(patient.app, { webhookUrl: receiver.url, secret: SECRET })
      const before = await metricsText(patient)

      for (let score = 50; score < 100; score += 1) patient.app.events.emit('verification.blocked', { ...blockedEvent(site.id), riskScore: score })
      await patient.app.webhooks.settle()

      expect(deliveryCount(await metricsText(patient), 'dropped')).toBe(deliveryCount(before, 'dropped'))
      expect(deliveryCount(await metricsText(patient), 'delivered')).toBe(deliveryCount(before, 'delivered') + 50)
      const scores = receiver.received.map((request) => (JSON.parse(request.body) as { data: { riskScore: number } }).data.riskScore)
      expect(scores).toHaveLength(50)
      expect(new Set(scores).size).toBe(50)
      // Ten at a time: the receiver never held more, and held several at once.
      expect(receiver.mostInFlight).toBeLessThanOrEqual(10)
      expect(receiver.mostInFlight).toBeGreaterThan(1)
      // In order: the n-th event (from 0) starts only once n - 9 deliveries have ended, each after
      // its arrival, so at least n - 9 arrived before it. (Within a batch in flight together, and
      // on a loaded machine across batches, arrivals may overtake one another.)
      expect(scores.filter((score, position) => position < score - 50 - 9)).toEqual([])
    } finally {
      await patient.close()
    }
  })

  it('holds a slot of the cap for the POST alone: a fast receiver is not capped by the pace of the delivery log', async () => {
    receiver = await startWebhookReceiver()
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })
    // The database is slow to take the records (forced: every write waits until released).
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    const record = service.app.webhooks.deliveries.record.bind(service.app.webhooks.deliveries)
    vi.spyOn(service.app.webhooks.deliveries, 'record').mockImplementation(async (delivery) => {
      await released
      return record(delivery)
    })
    const before = await metricsText(service)
    const emit = (count: number) => {
      for (let index = 0; index < count; index += 1) service.app.events.emit('verification.blocked', blockedEvent(site.id))
    }
    try {
      emit(10)
      await receiver.waitForRequest(9)
      // The ten POSTs have ended (counted as delivered); their records still wait.
      await vi.waitFor(async () => expect(deliveryCount(await metricsText(service), 'delivered')).toBe(deliveryCount(before, 'delivered') + 10), { timeout: 5_000 })
      emit(10)
      await receiver.waitForRequest(19)
    } finally {
      release()
    }
    await service.app.webhooks.settle()
    expect(deliveryCount(await metricsText(service), 'dropped')).toBe(deliveryCount(before, 'dropped'))
    const logged = await service.app.webhooks.deliveries.listRecent(site.id, 100)
    expect(logged.filter((delivery) => delivery.outcome === 'delivered')).toHaveLength(20)
  })

  it('reads an answer\'s body for a moment only: a receiver that keeps it open does not hold the delivery to the timeout', { timeout: 60_000 }, async () => {
    const patient = await buildTestApp({ webhookTimeoutMs: 8_000 })
    receiver = await startWebhookReceiver()
    try {
      receiver.behave({ status: 200, bodyOpenMs: 20_000 })
      const site = await createWebhookSite(patient.app, { webhookUrl: receiver.url, secret: SECRET })
      const started = performance.now()
      const delivery = await patient.app.webhooks.sendTest(site)
      expect(performance.now() - started).toBeLessThan(3_000)
      expect(delivery).toMatchObject({ outcome: 'delivered', statusCode: 200 })
    } finally {
      await patient.close()
    }
  })

  it('writes the count of dropped events when their minute ends, without waiting for anything else', { timeout: 30_000 }, async () => {
    receiver = await startWebhookReceiver()
    receiver.behave('hang')
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })
    // Ten in flight and a full line of 100 behind them.
    for (let index = 0; index < 110; index += 1) service.app.events.emit('verification.blocked', blockedEvent(site.id))
    await receiver.waitForRequest(9)

    // Only the clock of the drops is faked: the ten deliveries above run on real timers.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      for (let index = 0; index < 3; index += 1) service.app.events.emit('verification.blocked', blockedEvent(site.id))
      vi.advanceTimersByTime(30_000)
      service.app.events.emit('verification.blocked', blockedEvent(site.id))
      vi.advanceTimersByTime(30_000)
    } finally {
      vi.useRealTimers()
    }

    const dropped = async () => (await service.app.webhooks.deliveries.listRecent(site.id, 100)).filter((delivery) => delivery.outcome === 'dropped')
    await vi.waitFor(async () => expect(await dropped()).toHaveLength(1), { timeout: 2_000 })
    expect((await dropped())[0]?.error).toMatch(/^4 event\(s\) dropped since /)
  })

  /**
   * `count` events to a receiver that never answers, the service closed once the first 10 are in
   * flight: the site, the entries of dropped events it recorded, and its log lines.
   */
  async function closeWithEventsWaiting(count: number) {
    const lines: string[] = []
    const closing = await buildTestApp({ webhookTimeoutMs: SHUTDOWN_TIMEOUT_MS, logStream: { write: (line) => void lines.push(line) } })
    receiver = await startWebhookReceiver()
    receiver.behave('hang')
    const site = await createWebhookSite(closing.app, { webhookUrl: receiver.url, secret: SECRET })
    const record = vi.spyOn(closing.app.webhooks.deliveries, 'record')

    for (let index = 0; index < count; index += 1) closing.app.events.emit('verification.blocked', blockedEvent(site.id))
    await receiver.waitForRequest(9)
    await closing.close()

    const droppedEntries = record.mock.calls.map(([delivery]) => delivery).filter((delivery) => delivery.outcome === 'dropped')
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    return { site, droppedEntries, logged }
  }

  it('writes the count of dropped events at shutdown', { timeout: 60_000 }, async () => {
    const { site, droppedEntries } = await closeWithEventsWaiting(13)

    // The three waiting for a slot are not sent: shutdown waits only for the deliveries in flight.
    expect(receiver.received).toHaveLength(10)
    expect(droppedEntries).toEqual([expect.objectContaining({ siteId: site.id, error: expect.stringMatching(/^3 event\(s\) dropped since .* \(waiting when Tollgate shut down\)$/) })])
  })

  it('says how many events each limit dropped when one entry holds drops of two', { timeout: 60_000 }, async () => {
    // 10 in flight, 100 waiting, 5 over the line; then shutdown drops the 100.
    const { site, droppedEntries, logged } = await closeWithEventsWaiting(115)

    expect(receiver.received).toHaveLength(10)
    expect(droppedEntries).toEqual([
      expect.objectContaining({
        siteId: site.id,
        error: expect.stringMatching(/^105 event\(s\) dropped since \S+ \(100 events waiting behind 10 deliveries in flight for this site: 5; waiting when Tollgate shut down: 100\)$/),
      }),
    ])
    expect(logged.filter((line) => line.msg === 'webhook events dropped')).toEqual([
      expect.objectContaining({
        siteId: site.id,
        dropped: 105,
        droppedBy: { '100 events waiting behind 10 deliveries in flight for this site': 5, 'waiting when Tollgate shut down': 100 },
      }),
    ])
  })

  it('drops the waiting events as shutdown begins: a request still in flight does not let them start', { timeout: 60_000 }, async () => {
    let slowRequestArrived!: () => void
    const arrived = new Promise<void>((resolve) => (slowRequestArrived = resolve))
    const closing = await buildTestApp({
      webhookTimeoutMs: SHUTDOWN_TIMEOUT_MS,
      // A request that outlasts the deliveries in flight, as a test send or a long query can.
      beforeReady: (app) =>
        app.get('/test/slow', async () => {
          slowRequestArrived()
          await new Promise((resolve) => setTimeout(resolve, 2 * SHUTDOWN_TIMEOUT_MS))
          return 'done'
        }),
    })
    const address = await closing.app.listen({ port: 0, host: '127.0.0.1' })
    receiver = await startWebhookReceiver()
    receiver.behave('hang')
    const site = await createWebhookSite(closing.app, { webhookUrl: receiver.url, secret: SECRET })

    for (let index = 0; index < 13; index += 1) closing.app.events.emit('verification.blocked', blockedEvent(site.id))
    await receiver.waitForRequest(9)
    const slow = fetch(`${address}/test/slow`)
    await arrived
    await closing.close()

    expect(await (await slow).text()).toBe('done')
    // The ten in flight timed out while the slow request was being answered; the three waiting never started.
    expect(receiver.received).toHaveLength(10)
  })

  it('keeps one account whose receivers never answer from taking every delivery slot from the others', async () => {
    receiver = await startWebhookReceiver()
    receiver.behave('hang')
    const answering = await startWebhookReceiver()
    try {
      const account = await service.app.accounts.create(`${crypto.randomUUID()}@example.com`, 'not a real hash')
      if (account === undefined) throw new Error('no account')
      const flooding = await Promise.all(Array.from({ length: 6 }, () => createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET, accountId: account.id })))
      const other = await createWebhookSite(service.app, { webhookUrl: answering.url, secret: SECRET })
      for (const site of flooding) await service.app.siteCache.findById(site.id)

      // 6 sites x 10 events: within each site's share, but 60 is over the account's 40.
      for (const site of flooding) for (let index = 0; index < 10; index += 1) service.app.events.emit('verification.blocked', blockedEvent(site.id))
      service.app.events.emit('verification.blocked', blockedEvent(other.id))
      await answering.waitForRequest()
      await service.app.webhooks.settle()

      expect(receiver.received).toHaveLength(40)
      expect(answering.received).toHaveLength(1)
    } finally {
      await answering.close()
    }
  })

  it('never stores the webhook secret in plain text', async () => {
    receiver = await startWebhookReceiver()
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })
    service.app.events.emit('verification.blocked', blockedEvent(site.id))
    await service.app.webhooks.settle()

    const tables = await service.app.database.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    )
    expect(tables.map((table) => table.table_name)).toEqual(expect.arrayContaining(['sites', 'webhook_deliveries']))
    for (const { table_name: table } of tables) {
      const rows = await service.app.database.query(`SELECT row_to_json(t)::text AS row FROM "${table}" t`)
      expect(JSON.stringify(rows)).not.toContain(SECRET)
    }
    expect(JSON.stringify(await service.app.webhooks.deliveries.listRecent(site.id, 10))).not.toContain(SECRET)
  })
})

describe('webhook shutdown', () => {
  it('app close waits for the deliveries in flight and records them', { timeout: 60_000 }, async () => {
    const service = await buildTestApp({ webhookTimeoutMs: 5_000 })
    const receiver = await startWebhookReceiver()
    try {
      receiver.behave({ status: 200, delayMs: 300 })
      const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })
      const record = vi.spyOn(service.app.webhooks.deliveries, 'record')

      service.app.events.emit('verification.blocked', blockedEvent(site.id))
      await receiver.waitForRequest()
      await service.close()

      expect(record).toHaveBeenCalledWith(expect.objectContaining({ siteId: site.id, outcome: 'delivered', statusCode: 200 }))
      await expect(record.mock.results[0]?.value).resolves.toBeUndefined()
    } finally {
      await receiver.close()
    }
  })
})

describe('the spec timeout', () => {
  it('records a receiver that never answers as a timeout after 10 s', { timeout: 60_000 }, async () => {
    const service = await buildTestApp()
    const receiver = await startWebhookReceiver()
    try {
      receiver.behave('hang')
      const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })

      const started = performance.now()
      service.app.events.emit('verification.blocked', blockedEvent(site.id))
      expect(performance.now() - started).toBeLessThan(100)
      await service.app.webhooks.settle()

      const [delivery] = await service.app.webhooks.deliveries.listRecent(site.id, 10)
      expect(delivery).toMatchObject({ outcome: 'timeout', error: 'no answer within 10 s' })
      expect(delivery?.latencyMs).toBeGreaterThanOrEqual(9_990)
      expect(delivery?.latencyMs).toBeLessThan(11_000)
    } finally {
      await receiver.close()
      await service.close()
    }
  })
})
