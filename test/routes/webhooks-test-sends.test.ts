import type { LightMyRequestResponse } from 'fastify'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { asScript, createTestAccount, type TestAccount } from '../helpers/dashboard-client.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { hasPostgres } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import { blockedEvent, createWebhookSite } from '../helpers/webhook-site.js'

const SECRET = 'test sends own slots secret'
const TIMEOUT_MS = 5_000

/**
 * Test sends have slots of their own (5 per account, 25 per instance), apart from the slots of
 * real events: with open sign-up, one account's test sends to a receiver that never answers
 * must not leave other tenants' verification.blocked events without a slot.
 */
describe('test sends in slots of their own', () => {
  let service: TestApp
  let hanging: WebhookReceiver
  let answering: WebhookReceiver
  beforeAll(async () => {
    service = await buildTestApp({ database: hasPostgres ? 'postgres' : 'pglite', webhookTimeoutMs: TIMEOUT_MS })
  })
  afterAll(() => service.close())
  afterEach(async () => {
    await service.app.webhooks.settle()
    await hanging.close()
    await answering.close()
  })

  async function startReceivers(): Promise<void> {
    hanging = await startWebhookReceiver()
    hanging.behave('hang')
    answering = await startWebhookReceiver()
  }

  function sendTest(account: TestAccount, siteId: string): Promise<LightMyRequestResponse> {
    return service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/webhook/test`, headers: asScript(account) })
  }

  /**
   * Fires the sends and resolves once each one has either been refused or reached the hanging
   * receiver, which holds it open: the moment the slots are as full as these sends make them.
   */
  async function holdOpen(sends: Promise<LightMyRequestResponse>[]): Promise<LightMyRequestResponse[]> {
    const answered: LightMyRequestResponse[] = []
    for (const send of sends) void send.then((response) => answered.push(response))
    await vi.waitFor(() => expect(answered.length + hanging.received.length).toBe(sends.length), { timeout: TIMEOUT_MS - 1_000, interval: 20 })
    return answered
  }

  it("one account's test sends to a receiver that never answers, across 25 sites, leave another tenant's blocked event its slot", { timeout: 30_000 }, async () => {
    await startReceivers()
    const flooder = await createTestAccount(service.app)
    const floodingSites = await Promise.all(Array.from({ length: 25 }, () => createWebhookSite(service.app, { webhookUrl: hanging.url, secret: SECRET, accountId: flooder.id })))
    const neighbour = await createTestAccount(service.app)
    const neighbourSite = await createWebhookSite(service.app, { webhookUrl: answering.url, secret: SECRET, accountId: neighbour.id })

    // 25 sites x 10 test sends: each site within its 10 a minute, 250 in all.
    const sends = floodingSites.flatMap((site) => Array.from({ length: 10 }, () => sendTest(flooder, site.id)))
    const refused = await holdOpen(sends)

    service.app.events.emit('verification.blocked', blockedEvent(neighbourSite.id))
    expect(JSON.parse((await answering.waitForRequest(0, 3_000)).body)).toMatchObject({ siteId: neighbourSite.id })
    // The neighbour's own test send is not held up by the flooder's either.
    expect((await sendTest(neighbour, neighbourSite.id)).json()).toMatchObject({ test: true, outcome: 'delivered' })

    expect(hanging.received).toHaveLength(5)
    expect(refused).toHaveLength(245)
    for (const response of refused) {
      expect(response.statusCode).toBe(429)
      expect(response.headers['retry-after']).toBe(String(TIMEOUT_MS / 1000))
      expect(response.json().error).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/5 are in flight for the sites of this account/) })
    }
    const held = await Promise.all(sends)
    expect(held.filter((response) => response.statusCode === 200).map((response) => response.json<{ outcome: string }>().outcome)).toEqual(Array(5).fill('timeout'))
    await service.app.webhooks.settle()
    expect(await service.app.webhooks.deliveries.listRecent(neighbourSite.id, 10)).toEqual(
      expect.arrayContaining([expect.objectContaining({ isTest: false, outcome: 'delivered' }), expect.objectContaining({ isTest: true, outcome: 'delivered' })]),
    )
  })

  it("a test send refused for full slots leaves the site's ten a minute untouched", { timeout: 40_000 }, async () => {
    await startReceivers()
    await startWithinOneWindow(60_000, 20_000)
    const account = await createTestAccount(service.app)
    const stuck = await createWebhookSite(service.app, { webhookUrl: hanging.url, secret: SECRET, accountId: account.id })
    const site = await createWebhookSite(service.app, { webhookUrl: answering.url, secret: SECRET, accountId: account.id })
    const held = Array.from({ length: 5 }, () => sendTest(account, stuck.id))
    expect(await holdOpen(held)).toEqual([])

    for (let attempt = 0; attempt < 10; attempt += 1) {
      const refused = await sendTest(account, site.id)
      expect(refused.statusCode).toBe(429)
      expect(refused.json().error.message).toMatch(/5 are in flight for the sites of this account/)
    }
    await Promise.all(held)
    // The slots are free again, and the site still has its ten test sends of the minute.
    for (let attempt = 0; attempt < 10; attempt += 1) expect((await sendTest(account, site.id)).json()).toMatchObject({ test: true, outcome: 'delivered' })
    const eleventh = await sendTest(account, site.id)
    expect(eleventh.statusCode).toBe(429)
    expect(eleventh.json().error.message).toBe('Too many test sends for this site; retry later.')
  })

  it("answers 429 once the instance's 25 test-send slots are taken, and real events are still delivered", { timeout: 60_000 }, async () => {
    await startReceivers()
    const flooders = await Promise.all(Array.from({ length: 5 }, () => createTestAccount(service.app)))
    const sends: Promise<LightMyRequestResponse>[] = []
    for (const flooder of flooders) {
      const site = await createWebhookSite(service.app, { webhookUrl: hanging.url, secret: SECRET, accountId: flooder.id })
      for (let index = 0; index < 5; index += 1) sends.push(sendTest(flooder, site.id))
    }
    expect(await holdOpen(sends)).toEqual([])
    expect(hanging.received).toHaveLength(25)

    const latecomer = await createTestAccount(service.app)
    const site = await createWebhookSite(service.app, { webhookUrl: answering.url, secret: SECRET, accountId: latecomer.id })
    const refused = await sendTest(latecomer, site.id)
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe(String(TIMEOUT_MS / 1000))
    expect(refused.json().error.message).toMatch(/25 are in flight on this instance/)

    service.app.events.emit('verification.blocked', blockedEvent(site.id))
    expect(JSON.parse((await answering.waitForRequest(0, 3_000)).body)).toMatchObject({ siteId: site.id })
    await Promise.all(sends)
  })
})
