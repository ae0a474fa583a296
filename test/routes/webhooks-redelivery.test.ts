import { randomUUID } from 'node:crypto'
import { verify } from '@octokit/webhooks-methods'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { toStandardWebhooksSecret } from '../../src/domain/webhooks/sign-webhook.js'
import type { WebhookDelivery } from '../../src/storage/sql/webhook-delivery-repository.js'
import { asBrowser, asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { shareSite } from '../helpers/site-sharing.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import { verifyFromShop } from '../helpers/webhook-site.js'

const SECRET = 'redelivery webhook secret'

interface DeliveryView {
  id: string
  event: string
  test: boolean
  verificationId: string | null
  redeliveryOf: string | null
  outcome: string
  statusCode: number | null
}

/**
 * An operator resends a missed verification.blocked event (POST .../redeliver): rebuilt from the
 * verification's row, under its first id, signed with the current secret, to a real receiver.
 */
describe.each(deployments)('webhook redelivery, on $name', ({ available, options }) => {
  let service: TestApp
  let owner: TestAccount
  let receiver: WebhookReceiver
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp(options)
    owner = await createTestAccount(service.app)
    receiver = await startWebhookReceiver()
  })
  beforeEach(() => {
    receiver?.behave({ status: 204 })
  })
  afterAll(async () => {
    if (!available) return
    await receiver.close()
    await service.close()
  })

  /** A site that blocks every scored verification (a request without Origin scores above 0). */
  async function blockingSite(): Promise<{ id: string; siteKey: string }> {
    return createTestSite(service.app, owner, {
      settings: { difficulty: 1, challengeThreshold: 0, blockThreshold: 1, webhookUrl: receiver.url, webhookSecret: SECRET },
    })
  }

  /** Blocks one verification of the site; resolves with its row's id once the log has written it and the delivery is recorded. */
  async function blockOnce(siteKey: string): Promise<string> {
    const { answer } = await verifyFromShop(service.app, siteKey)
    expect(answer.json(), answer.body).toMatchObject({ action: 'block' })
    await service.app.webhooks.settle()
    await service.app.verificationLog.flush()
    return String(answer.headers['x-request-id'])
  }

  const listDeliveries = async (siteId: string, query = '') =>
    (await service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/webhook-deliveries${query}`, headers: asScript(owner) })).json<{ items: DeliveryView[] }>().items

  const redeliver = (siteId: string, deliveryId: string, headers = asBrowser(owner)) =>
    service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/webhook-deliveries/${deliveryId}/redeliver`, headers })

  it.runIf(available)('resends a failed delivery, once the receiver is fixed, under the same event id, signed, and lists it as a redelivery', async () => {
    const site = await blockingSite()
    receiver.behave({ status: 500 })
    const before = receiver.received.length
    const verificationId = await blockOnce(site.siteKey)
    const first = await receiver.waitForRequest(before)
    const [failed] = await listDeliveries(site.id, '?outcome=failed')
    expect(failed).toMatchObject({ outcome: 'failed', statusCode: 500, verificationId, redeliveryOf: null })
    expect(await listDeliveries(site.id, '?outcome=delivered')).toEqual([])

    receiver.behave({ status: 204 })
    const response = await redeliver(site.id, failed!.id)

    expect(response.statusCode, response.body).toBe(200)
    const resent = response.json<DeliveryView>()
    expect(resent).toMatchObject({ event: 'verification.blocked', test: false, verificationId, redeliveryOf: failed!.id, outcome: 'delivered', statusCode: 204 })
    expect(resent.id).not.toBe(failed!.id)
    const request = await receiver.waitForRequest(before + 1)
    // The same event: its id in the body and both id headers, every field as first sent, and when it was sent again.
    const firstBody = JSON.parse(first.body) as Record<string, unknown>
    const body = JSON.parse(request.body) as Record<string, unknown>
    expect(body).toStrictEqual({ ...firstBody, redeliveredAt: expect.stringMatching(/Z$/) })
    expect(body.id).toBe(failed!.id)
    expect(request.headers['x-service-delivery']).toBe(failed!.id)
    expect(request.headers['webhook-id']).toBe(failed!.id)
    expect(Math.abs(Date.parse(String(body.redeliveredAt)) - Date.now())).toBeLessThan(60_000)
    expect(await verify(SECRET, request.body, String(request.headers['x-service-signature']))).toBe(true)
    // A fresh webhook-timestamp: Standard Webhooks libraries accept it (they refuse one 5 minutes away).
    expect(new Webhook(toStandardWebhooksSecret(SECRET)).verify(request.body, request.headers as Record<string, string>)).toEqual(body)

    expect((await listDeliveries(site.id)).map(({ id, outcome, redeliveryOf }) => ({ id, outcome, redeliveryOf }))).toEqual([
      { id: resent.id, outcome: 'delivered', redeliveryOf: failed!.id },
      { id: failed!.id, outcome: 'failed', redeliveryOf: null },
    ])
    // A resend of the resend sends the same event again, naming its first delivery.
    const again = await redeliver(site.id, resent.id, asScript(owner))
    expect(again.json()).toMatchObject({ redeliveryOf: failed!.id, outcome: 'delivered' })
    expect(JSON.parse((await receiver.waitForRequest(before + 2)).body)).toMatchObject({ id: failed!.id, data: { verificationId } })
  })

  it.runIf(available)('signs a resend with the current secret, and the replaced one while it is kept, and sends it to the current URL', async () => {
    const site = await blockingSite()
    receiver.behave({ status: 503 })
    await blockOnce(site.siteKey)
    const [failed] = await listDeliveries(site.id)
    const fixed = await startWebhookReceiver()
    try {
      const newSecret = 'the new redelivery secret'
      const update = await service.app.inject({
        method: 'PUT',
        url: `/api/v1/sites/${site.id}`,
        headers: asScript(owner),
        payload: { settings: { webhookUrl: fixed.url, webhookSecret: newSecret } },
      })
      expect(update.statusCode, update.body).toBe(200)
      expect((await redeliver(site.id, failed!.id)).json()).toMatchObject({ outcome: 'delivered', redeliveryOf: failed!.id })
      const request = await fixed.waitForRequest(0)
      expect(await verify(newSecret, request.body, String(request.headers['x-service-signature']))).toBe(true)
      // In the rotation's overlap: two Standard Webhooks signatures, each secret's, as a new event's.
      expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2)
      for (const secret of [SECRET, newSecret]) {
        expect(new Webhook(toStandardWebhooksSecret(secret)).verify(request.body, request.headers as Record<string, string>)).toMatchObject({ id: failed!.id })
      }
      expect(() => new Webhook(toStandardWebhooksSecret('another secret')).verify(request.body, request.headers as Record<string, string>)).toThrow()
    } finally {
      await fixed.close()
      receiver.behave({ status: 204 })
    }
  })

  it.runIf(available)('answers 404 for a delivery the site does not list: unknown, malformed, or another site\'s', async () => {
    const site = await blockingSite()
    const other = await blockingSite()
    receiver.behave({ status: 500 })
    await blockOnce(other.siteKey)
    receiver.behave({ status: 204 })
    const [othersDelivery] = await listDeliveries(other.id)
    const before = receiver.received.length
    for (const deliveryId of [randomUUID(), 'not-a-delivery', othersDelivery!.id]) {
      const response = await redeliver(site.id, deliveryId)
      expect(response.statusCode, deliveryId).toBe(404)
      expect(response.json().error.code).toBe('not_found')
    }
    expect(receiver.received).toHaveLength(before)
  })

  it.runIf(available)('answers 409 webhook_event_not_redeliverable for a test send, a surge event and a count of dropped events', async () => {
    const site = await blockingSite()
    const testSend = (await service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/webhook/test`, headers: asScript(owner) })).json<DeliveryView>()
    const row = (overrides: Partial<WebhookDelivery>): WebhookDelivery => ({
      id: randomUUID(), siteId: site.id, event: 'verification.blocked', url: receiver.url, isTest: false, verificationId: null, redeliveryOf: null,
      outcome: 'failed', statusCode: 500, latencyMs: 3, error: 'the receiver answered HTTP 500', createdAt: new Date(), ...overrides,
    })
    const surge = row({ event: 'surge.started' })
    const dropped = row({ outcome: 'dropped', statusCode: null, error: '5 event(s) dropped' })
    for (const delivery of [surge, dropped]) await service.app.webhooks.deliveries.record(delivery)
    const before = receiver.received.length
    for (const [deliveryId, message] of [[testSend.id, /test send/], [surge.id, /surge\.started/], [dropped.id, /dropped/]] as const) {
      const response = await redeliver(site.id, deliveryId)
      expect(response.statusCode, response.body).toBe(409)
      expect(response.json().error).toMatchObject({ code: 'webhook_event_not_redeliverable', message: expect.stringMatching(message) })
    }
    expect(receiver.received).toHaveLength(before)
  })

  it.runIf(available)("answers 410 webhook_event_expired once the verification's row is gone from the log", async () => {
    const site = await blockingSite()
    receiver.behave({ status: 500 })
    const verificationId = await blockOnce(site.siteKey)
    receiver.behave({ status: 204 })
    const [failed] = await listDeliveries(site.id)
    // As the log's retention deletes it.
    await service.app.database.query('DELETE FROM verifications WHERE id = $1', [verificationId])
    const before = receiver.received.length
    const response = await redeliver(site.id, failed!.id)
    expect(response.statusCode).toBe(410)
    expect(response.json().error.code).toBe('webhook_event_expired')
    expect(receiver.received).toHaveLength(before)
  })

  it.runIf(available)("answers 410 webhook_event_expired, naming the erasure, once a visitor's erasure deleted the row", async () => {
    const site = await blockingSite()
    receiver.behave({ status: 500 })
    const verificationId = await blockOnce(site.siteKey)
    receiver.behave({ status: 204 })
    const [failed] = await listDeliveries(site.id)
    const [row] = (await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications`, headers: asScript(owner) })).json<{ items: { id: string; clientIp: string }[] }>().items
    expect(row?.id).toBe(verificationId)
    const erased = await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.id}/verifications?clientIp=${row!.clientIp}`, headers: asBrowser(owner) })
    expect(erased.json()).toEqual({ deleted: 1 })
    const before = receiver.received.length
    const response = await redeliver(site.id, failed!.id)
    expect(response.statusCode).toBe(410)
    expect(response.json().error).toMatchObject({ code: 'webhook_event_expired', message: expect.stringMatching(/erasure/) })
    expect(receiver.received).toHaveLength(before)
  })

  it.runIf(available)('answers 409 webhook_not_configured once the webhook is removed, and 403 to a viewer', async () => {
    const site = await blockingSite()
    receiver.behave({ status: 500 })
    await blockOnce(site.siteKey)
    receiver.behave({ status: 204 })
    const [failed] = await listDeliveries(site.id)
    const viewer = await createTestAccount(service.app)
    await shareSite(service.app, owner, viewer, site.id, 'viewer')
    const refused = await redeliver(site.id, failed!.id, asScript(viewer))
    expect([refused.statusCode, refused.json().error.code]).toEqual([403, 'forbidden'])

    await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${site.id}`, headers: asScript(owner), payload: { settings: { webhookUrl: null } } })
    const response = await redeliver(site.id, failed!.id)
    expect(response.statusCode).toBe(409)
    expect(response.json().error.code).toBe('webhook_not_configured')
  })

  it.runIf(available)('allows 10 resends a minute per site, then 429 rate_limited with Retry-After, apart from the test sends', async () => {
    await startWithinOneWindow(60_000)
    const site = await blockingSite()
    receiver.behave({ status: 500 })
    await blockOnce(site.siteKey)
    receiver.behave({ status: 204 })
    const [failed] = await listDeliveries(site.id)
    for (let index = 0; index < 10; index += 1) expect((await redeliver(site.id, failed!.id)).statusCode).toBe(200)
    const refused = await redeliver(site.id, failed!.id)
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error).toMatchObject({ code: 'rate_limited', message: 'Too many resends for this site; retry later.' })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    const testSend = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/webhook/test`, headers: asScript(owner) })
    expect(testSend.statusCode).toBe(200)
  })

  it.runIf(available)('lists the deliveries of one event kind, and refuses an outcome it does not know', async () => {
    const site = await blockingSite()
    await service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/webhook/test?event=surge.started`, headers: asScript(owner) })
    await service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/webhook/test`, headers: asScript(owner) })
    expect((await listDeliveries(site.id, '?event=surge.started')).map((item) => item.event)).toEqual(['surge.started'])
    expect((await listDeliveries(site.id, '?event=surge.started&outcome=failed'))).toEqual([])
    const bad = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/webhook-deliveries?outcome=lost`, headers: asScript(owner) })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field: 'querystring.outcome' })] })
  })
})
