import { verify } from '@octokit/webhooks-methods'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toStandardWebhooksSecret } from '../../src/domain/webhooks/sign-webhook.js'
import { asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { findClosedPort, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import { verifyFromShop } from '../helpers/webhook-site.js'

const SECRET = 'end-to-end webhook secret'

/**
 * From the SDK's requests to the receiver: a site with blockThreshold 1 blocks every scored
 * verification (a request without Origin always scores above 0), and each block reaches the
 * site's webhook, while the verification itself answers as fast as ever whatever the receiver
 * does. The delivery timeout is the spec's 10 s.
 */
describe('a blocked verification, end to end', () => {
  let service: TestApp
  let owner: TestAccount
  let receiver: WebhookReceiver
  beforeAll(async () => {
    service = await buildTestApp()
    owner = await createTestAccount(service.app)
    receiver = await startWebhookReceiver()
  })
  afterAll(async () => {
    await receiver.close()
    await service.close()
  })

  async function blockingSite(webhookUrl: string): Promise<{ id: string; siteKey: string }> {
    return createTestSite(service.app, owner, {
      settings: { difficulty: 1, challengeThreshold: 0, blockThreshold: 1, webhookUrl, webhookSecret: SECRET },
    })
  }

  /** Requests a challenge, solves it and submits it; resolves with the answer and how long verify took. */
  async function verifyOnce(siteKey: string) {
    const { answer, elapsedMs } = await verifyFromShop(service.app, siteKey)
    expect(answer.statusCode, answer.body).toBe(200)
    return { body: answer.json<{ success: boolean; action: string; riskScore: number }>(), requestId: String(answer.headers['x-request-id']), elapsedMs }
  }

  it('POSTs the spec payload, signed, to the site webhook', async () => {
    const site = await blockingSite(receiver.url)
    const before = receiver.received.length

    const { body, requestId } = await verifyOnce(site.siteKey)

    expect(body).toMatchObject({ success: false, action: 'block' })
    const request = await receiver.waitForRequest(before)
    const payload = JSON.parse(request.body) as { timestamp: string; data: { anomalies: unknown[]; device: string; verificationId: string } }
    expect(Object.keys(payload).sort()).toEqual(['data', 'event', 'id', 'siteId', 'timestamp'])
    expect(Object.keys(payload.data).sort()).toEqual(['anomalies', 'countryCode', 'device', 'hostname', 'pageAction', 'riskScore', 'verificationId'])
    expect(payload).toEqual({
      id: request.headers['x-service-delivery'],
      event: 'verification.blocked',
      siteId: site.id,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      data: {
        riskScore: body.riskScore,
        anomalies: expect.any(Array),
        countryCode: expect.stringMatching(/^[A-Z]{2}$/),
        verificationId: requestId,
        device: expect.stringMatching(/^[0-9a-f]{24}$/),
        hostname: 'shop.example',
        pageAction: 'checkout',
      },
    })
    // The block is found in the site's log by the reference the visitor was shown, with the same device.
    await service.app.verificationLog.flush()
    const found = await service.app.inject({
      method: 'GET',
      url: `/api/v1/sites/${site.id}/verifications?reference=${requestId.slice(0, 13)}`,
      headers: asScript(owner),
    })
    expect(found.json<{ items: { id: string; action: string; device: string }[] }>().items).toEqual([
      expect.objectContaining({ id: requestId, action: 'block', device: payload.data.device }),
    ])
    // The payload's verificationId is the row's id: the log's verificationId filter finds that row alone.
    const byVerificationId = await service.app.inject({
      method: 'GET',
      url: `/api/v1/sites/${site.id}/verifications?verificationId=${payload.data.verificationId}`,
      headers: asScript(owner),
    })
    expect(byVerificationId.json<{ items: { id: string }[] }>().items).toEqual([expect.objectContaining({ id: requestId, action: 'block' })])
    expect(payload.data.anomalies.every((label: unknown) => typeof label === 'string')).toBe(true)
    expect(Math.abs(Date.parse(payload.timestamp) - Date.now())).toBeLessThan(60_000)
    expect(request.headers['content-type']).toBe('application/json')
    expect(request.headers['x-service-event']).toBe('verification.blocked')
    expect(await verify(SECRET, request.body, String(request.headers['x-service-signature']))).toBe(true)
    expect(new Webhook(toStandardWebhooksSecret(SECRET)).verify(request.body, request.headers as Record<string, string>)).toEqual(payload)

    await service.app.webhooks.settle()
    const deliveries = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/webhook-deliveries`, headers: asScript(owner) })
    // The delivery log names the block it told of: the row the payload's verificationId finds.
    expect(deliveries.json().items).toMatchObject([{ id: request.headers['x-service-delivery'], outcome: 'delivered', test: false, verificationId: requestId }])
  })

  it('answers at its usual speed while the receiver never answers; the delivery times out after 10 s', { timeout: 60_000 }, async () => {
    receiver.behave({ status: 204 })
    const usual = await verifyOnce((await blockingSite(receiver.url)).siteKey)
    await service.app.webhooks.settle()

    receiver.behave('hang')
    const site = await blockingSite(receiver.url)
    const stalled = await verifyOnce(site.siteKey)

    expect(stalled.body.action).toBe('block')
    // Waiting for the webhook would take 10 s; the slack only absorbs a busy test machine.
    expect(stalled.elapsedMs).toBeLessThan(usual.elapsedMs + 1_000)
    await service.app.webhooks.settle()
    const deliveries = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/webhook-deliveries`, headers: asScript(owner) })
    const [delivery] = deliveries.json().items
    expect(delivery).toMatchObject({ outcome: 'timeout', statusCode: null, error: 'no answer within 10 s' })
    expect(delivery.latencyMs).toBeGreaterThanOrEqual(9_990)
    receiver.behave({ status: 204 })
  })

  it('answers the same with the receiver down; the delivery is recorded as failed', async () => {
    const site = await blockingSite(`http://127.0.0.1:${await findClosedPort()}/hook`)
    const { body } = await verifyOnce(site.siteKey)
    expect(body).toMatchObject({ success: false, action: 'block' })

    await service.app.webhooks.settle()
    const deliveries = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/webhook-deliveries`, headers: asScript(owner) })
    expect(deliveries.json().items).toMatchObject([{ outcome: 'failed', statusCode: null, error: expect.stringContaining('ECONNREFUSED') }])
    // The service is unaffected: the next verification is answered as usual.
    expect((await verifyOnce(site.siteKey)).body.action).toBe('block')
  })
})
