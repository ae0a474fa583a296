import { verify } from '@octokit/webhooks-methods'
import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { hasPostgres, hasRedis } from '../helpers/services.js'
import { buildSharedInstances, type SharedInstances } from '../helpers/shared-instances.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import { blockedEvent } from '../helpers/webhook-site.js'

const OLD_SECRET = 'the secret the receiver had first'
const NEW_SECRET = 'the secret that replaced it, 0123456789'
/** A burst three times a site's slots: 10 in flight, 20 waiting. */
const BURST = 30
/** Long enough that the change is answered before the first 10 end, on a busy machine too. */
const RECEIVER_DELAY_MS = 1_500

/** Whether the delivery verifies with the secret: X-Service-Signature, and webhook-signature (Standard Webhooks). */
async function verifiesWith(secret: string, delivery: ReceivedWebhook): Promise<{ service: boolean; standard: boolean }> {
  let standard = true
  try {
    new Webhook(Buffer.from(secret).toString('base64')).verify(delivery.body, delivery.headers as Record<string, string>)
  } catch {
    standard = false
  }
  return { service: await verify(secret, delivery.body, String(delivery.headers['x-service-signature'])), standard }
}

/**
 * An event waiting for a delivery slot is sent with its site as it is when its delivery starts, not
 * as the blocked verification read it: a secret replaced, a webhook removed or changed while it waited
 * applies to it (docs/webhooks.md, "Delivery").
 */
describe('events waiting for a delivery slot when the webhook changes', () => {
  let service: TestApp
  let account: TestAccount
  let receiver: WebhookReceiver
  let other: WebhookReceiver

  beforeAll(async () => {
    // The receiver's 1.5 s answers within the delivery timeout, however busy the machine.
    service = await buildTestApp({ webhookTimeoutMs: 10_000 })
    account = await createTestAccount(service.app)
  })
  afterAll(async () => {
    await service?.close()
  })
  beforeEach(async () => {
    receiver = await startWebhookReceiver()
    other = await startWebhookReceiver()
    receiver.behave({ status: 204, delayMs: RECEIVER_DELAY_MS })
  })
  afterEach(async () => {
    await service.app.webhooks.settle()
    await receiver.close()
    await other.close()
  })

  const droppedCount = async () => {
    const metrics = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    return Number(/^tollgate_webhook_deliveries_total\{outcome="dropped"\} (\d+)$/m.exec(metrics)?.[1] ?? 0)
  }
  const update = (id: string, settings: object) =>
    service.app.inject({ method: 'PUT', url: `/api/v1/sites/${id}`, headers: asScript(account), payload: { settings } })

  /**
   * A burst of blocked verifications handing their site as they read it (as the verify route does),
   * against a slow receiver: once its first 10 arrive (the other 20 waiting), the site's settings
   * are changed to `settings`. Answers how many deliveries had reached the receiver when the change
   * was answered.
   */
  async function burstThen(settings: object): Promise<number> {
    const site = await createTestSite(service.app, account, { settings: { webhookUrl: receiver.url, webhookSecret: OLD_SECRET } })
    const asRead = await service.app.siteCache.findById(site.id)
    expect(asRead).toBeDefined()
    for (let index = 0; index < BURST; index += 1) service.app.events.emit('verification.blocked', { ...blockedEvent(site.id), site: asRead })
    await receiver.waitForRequest(9)
    const changed = await update(site.id, settings)
    expect(changed.statusCode, changed.body).toBe(200)
    const reachedBefore = receiver.received.length
    // Only the first 10 were in flight: the rest waited for a slot (the receiver takes 1.5 s).
    expect(reachedBefore).toBe(10)
    await service.app.webhooks.settle()
    return reachedBefore
  }

  it('signs every delivery that starts after a secret is replaced with the new secret alone', async () => {
    const reachedBefore = await burstThen({ webhookSecret: NEW_SECRET, previousWebhookSecretExpiresAt: null })

    expect(receiver.received).toHaveLength(BURST)
    for (const delivery of receiver.received.slice(0, reachedBefore)) expect(await verifiesWith(OLD_SECRET, delivery)).toEqual({ service: true, standard: true })
    for (const delivery of receiver.received.slice(reachedBefore)) {
      expect(await verifiesWith(NEW_SECRET, delivery)).toEqual({ service: true, standard: true })
      expect(await verifiesWith(OLD_SECRET, delivery)).toEqual({ service: false, standard: false })
    }
  })

  it('sends no waiting event to a webhook removed meanwhile, nor counts it as dropped', async () => {
    const droppedBefore = await droppedCount()
    await burstThen({ webhookUrl: null })

    // The 10 in flight when it was removed, and none after.
    expect(receiver.received).toHaveLength(10)
    // The operator's own change, not a limit of Tollgate's: nothing for TollgateWebhookDeliveriesFailing.
    expect(await droppedCount()).toBe(droppedBefore)
  })

  it('sends no waiting event of a kind its webhook no longer wants', async () => {
    await burstThen({ webhookEvents: [] })

    expect(receiver.received).toHaveLength(10)
  })

  it('sends the waiting events to the new URL once the webhook moved, signed with its secret', async () => {
    await burstThen({ webhookUrl: other.url, webhookSecret: NEW_SECRET, previousWebhookSecretExpiresAt: null })

    expect(receiver.received).toHaveLength(10)
    expect(other.received).toHaveLength(BURST - 10)
    for (const delivery of other.received) expect(await verifiesWith(NEW_SECRET, delivery)).toEqual({ service: true, standard: true })
  })
})

// The secret replaced through another instance: the sender's cached copy goes on the announcement
// (Redis, plugins/sites.ts), before its next delivery starts.
describe.skipIf(!hasPostgres || !hasRedis)('events waiting on one instance when the secret is replaced through another', () => {
  let shared: SharedInstances
  let receiver: WebhookReceiver

  beforeAll(async () => {
    shared = await buildSharedInstances(2)
    receiver = await startWebhookReceiver()
  })
  afterAll(async () => {
    await receiver?.close()
    await shared?.close()
  })

  it('signs every delivery that starts after the replacement with the new secret alone', async () => {
    const [owner, sender] = shared.instances as [TestApp['app'], TestApp['app']]
    const account = await createTestAccount(owner)
    receiver.behave({ status: 204, delayMs: RECEIVER_DELAY_MS })
    const site = await createTestSite(owner, account, { settings: { webhookUrl: receiver.url, webhookSecret: OLD_SECRET } })
    // In the sender's cache, as its verify route leaves it.
    const asRead = await sender.siteCache.findById(site.id)
    expect(asRead).toBeDefined()
    for (let index = 0; index < BURST; index += 1) sender.events.emit('verification.blocked', { ...blockedEvent(site.id), site: asRead })
    await receiver.waitForRequest(9)
    const changed = await owner.inject({
      method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(account),
      payload: { settings: { webhookSecret: NEW_SECRET, previousWebhookSecretExpiresAt: null } },
    })
    expect(changed.statusCode, changed.body).toBe(200)
    expect(receiver.received).toHaveLength(10)
    await sender.webhooks.settle()

    expect(receiver.received).toHaveLength(BURST)
    for (const delivery of receiver.received.slice(10)) expect(await verifiesWith(NEW_SECRET, delivery)).toEqual({ service: true, standard: true })
  })
})
