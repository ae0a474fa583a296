import { randomUUID } from 'node:crypto'
import { verify } from '@octokit/webhooks-methods'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeSiteRouteAuthCases } from '../helpers/auth-cases.js'
import { asBrowser, asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import type { SurgePayload } from '../../src/domain/webhooks/webhook-payload.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { findClosedPort, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'

const SECRET = 'whsec_dG9sbGdhdGUgd2ViaG9vayByb3V0ZSB0ZXN0cw=='

describe('webhook routes', () => {
  let service: TestApp
  let owner: TestAccount
  let stranger: TestAccount
  let receiver: WebhookReceiver
  beforeAll(async () => {
    service = await buildTestApp()
    owner = await createTestAccount(service.app)
    stranger = await createTestAccount(service.app)
    receiver = await startWebhookReceiver()
  })
  afterAll(async () => {
    await receiver.close()
    await service.close()
  })

  /** A site whose webhook is set through the spec's PUT body, as an operator would set it. */
  async function siteWithWebhook(url: string = receiver.url): Promise<string> {
    const site = await createTestSite(service.app, owner)
    const update = await service.app.inject({
      method: 'PUT',
      url: `/api/v1/sites/${site.id}`,
      headers: asScript(owner),
      payload: { settings: { webhookUrl: url, webhookSecret: SECRET } },
    })
    expect(update.statusCode, update.body).toBe(200)
    return site.id
  }

  describe('POST /api/v1/sites/{id}/webhook/test', () => {
    it('sends a signed test event now and answers its outcome', async () => {
      const siteId = await siteWithWebhook()
      const before = receiver.received.length

      const response = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/webhook/test`, headers: asBrowser(owner) })

      expect(response.statusCode, response.body).toBe(200)
      const delivery = response.json()
      expect(delivery).toStrictEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        event: 'verification.blocked',
        url: receiver.url,
        test: true,
        // A sample's verificationId names no verification: the delivery tells of none.
        verificationId: null,
        redeliveryOf: null,
        outcome: 'delivered',
        statusCode: 204,
        latencyMs: expect.any(Number),
        error: null,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      })
      expect(receiver.received).toHaveLength(before + 1)
      const request = await receiver.waitForRequest(before)
      expect(JSON.parse(request.body)).toStrictEqual({
        id: delivery.id,
        event: 'verification.blocked',
        siteId,
        timestamp: expect.stringMatching(/Z$/),
        data: {
          riskScore: 100,
          anomalies: ['webdriver_detected', 'datacenter_ip'],
          countryCode: 'XX',
          verificationId: delivery.id,
          device: null,
          hostname: 'www.example.com',
          pageAction: 'login',
        },
        test: true,
      })
      expect(request.headers['x-service-delivery']).toBe(delivery.id)
      expect(await verify(SECRET, request.body, String(request.headers['x-service-signature']))).toBe(true)
      // A whsec_ secret is used by Standard Webhooks receivers exactly as it was set.
      expect(new Webhook(SECRET).verify(request.body, request.headers as Record<string, string>)).toMatchObject({ test: true })
      expect(response.body).not.toContain(SECRET)
    })

    it('sends a sample of the surge events when asked for one, whatever the site\'s webhookEvents', async () => {
      const siteId = await siteWithWebhook()
      for (const [event, challengesPerMinute] of [['surge.started', 1_200], ['surge.ended', 150]] as const) {
        const before = receiver.received.length
        const response = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/webhook/test?event=${event}`, headers: asScript(owner) })
        expect(response.statusCode, response.body).toBe(200)
        expect(response.json()).toMatchObject({ event, test: true, verificationId: null, outcome: 'delivered' })
        const request = await receiver.waitForRequest(before)
        expect(request.headers['x-service-event']).toBe(event)
        const body = JSON.parse(request.body) as SurgePayload
        expect(body).toStrictEqual({
          id: response.json().id,
          event,
          siteId,
          timestamp: expect.stringMatching(/Z$/),
          data: { startedAt: expect.stringMatching(/Z$/), challengesPerMinute, threshold: 600 },
          test: true,
        })
        expect(Date.parse(body.data.startedAt)).toBeLessThanOrEqual(Date.parse(body.timestamp))
        expect(await verify(SECRET, request.body, String(request.headers['x-service-signature']))).toBe(true)
      }
    })

    it('refuses an event kind it does not know with 400 validation_error, sending nothing', async () => {
      const siteId = await siteWithWebhook()
      const before = receiver.received.length
      const response = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/webhook/test?event=surge.begun`, headers: asScript(owner) })
      expect(response.statusCode).toBe(400)
      expect(response.json().error.code).toBe('validation_error')
      expect(receiver.received).toHaveLength(before)
    })

    it('answers 200 with the failure when the receiver is down', async () => {
      const siteId = await siteWithWebhook(`http://127.0.0.1:${await findClosedPort()}/hook`)
      const response = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/webhook/test`, headers: asScript(owner) })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({ outcome: 'failed', statusCode: null, error: expect.stringContaining('ECONNREFUSED') })
    })

    it('answers 409 webhook_not_configured for a site without a webhook', async () => {
      const site = await createTestSite(service.app, owner)
      const response = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/webhook/test`, headers: asScript(owner) })
      expect(response.statusCode).toBe(409)
      expect(response.json().error.code).toBe('webhook_not_configured')
    })

    it('allows 10 test sends a minute per site, then 429 rate_limited with Retry-After', async () => {
      await startWithinOneWindow(60_000)
      const siteId = await siteWithWebhook()
      const send = () => service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/webhook/test`, headers: asScript(owner) })
      for (let index = 0; index < 10; index += 1) expect((await send()).statusCode).toBe(200)
      const refused = await send()
      expect(refused.statusCode).toBe(429)
      expect(refused.json().error.code).toBe('rate_limited')
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    })
  })

  describe('GET /api/v1/sites/{id}/webhook-deliveries', () => {
    it('lists the recent deliveries newest first, never with the secret', async () => {
      const siteId = await siteWithWebhook()
      const sent: string[] = []
      for (let index = 0; index < 3; index += 1) {
        const response = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/webhook/test`, headers: asScript(owner) })
        sent.push(response.json<{ id: string }>().id)
      }

      const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/webhook-deliveries`, headers: asBrowser(owner) })

      expect(response.statusCode).toBe(200)
      expect(response.json<{ items: { id: string }[] }>().items.map((item) => item.id)).toEqual(sent.reverse())
      expect(response.json().items[0]).toMatchObject({ outcome: 'delivered', statusCode: 204, latencyMs: expect.any(Number), error: null })
      expect(response.body).not.toContain(SECRET)
      const site = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}`, headers: asScript(owner) })
      expect(site.body).not.toContain(SECRET)
    })

    it('takes a limit from 1 to 100', async () => {
      const siteId = await siteWithWebhook()
      await service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/webhook/test`, headers: asScript(owner) })
      await service.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/webhook/test`, headers: asScript(owner) })
      const one = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/webhook-deliveries?limit=1`, headers: asScript(owner) })
      expect(one.json().items).toHaveLength(1)
      const zero = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/webhook-deliveries?limit=0`, headers: asScript(owner) })
      expect(zero.statusCode).toBe(400)
      expect(zero.json().error.code).toBe('validation_error')
      const endless = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/webhook-deliveries?limit=Infinity`, headers: asScript(owner) })
      expect([endless.statusCode, endless.json().error.details]).toEqual([400, [{ field: 'querystring.limit', message: 'must be a finite number' }]])
    })

    it('an empty list for a site that never sent one', async () => {
      const site = await createTestSite(service.app, owner)
      const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/webhook-deliveries`, headers: asScript(owner) })
      expect(response.json()).toEqual({ items: [], nextCursor: null })
    })

    it('lists nothing older than 30 days, even before anything has pruned it', async () => {
      const site = await createTestSite(service.app, owner)
      const row = { siteId: site.id, event: 'verification.blocked' as const, url: 'https://hooks.example/x', isTest: false, verificationId: null, redeliveryOf: null, outcome: 'delivered' as const, statusCode: 204, latencyMs: 3, error: null }
      const recent = { ...row, id: randomUUID(), createdAt: new Date(Date.now() - 29 * 86_400_000) }
      await service.app.webhooks.deliveries.record(recent)
      await service.app.webhooks.deliveries.record({ ...row, id: randomUUID(), createdAt: new Date(Date.now() - 40 * 86_400_000) })

      const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/webhook-deliveries`, headers: asScript(owner) })
      expect(response.json()).toEqual({ items: [expect.objectContaining({ id: recent.id })], nextCursor: null })
    })

    it('pages through every kept delivery with nextCursor, each once, rows of one millisecond included', async () => {
      const site = await createTestSite(service.app, owner)
      const createdAt = new Date()
      const ids = Array.from({ length: 5 }, () => randomUUID())
      for (const id of ids) {
        await service.app.webhooks.deliveries.record({
          id, siteId: site.id, event: 'verification.blocked', url: 'https://hooks.example/x', isTest: false, verificationId: null, redeliveryOf: null,
          outcome: 'delivered', statusCode: 204, latencyMs: 3, error: null, createdAt,
        })
      }
      const seen: string[] = []
      const cursors: (string | null)[] = []
      let cursor: string | null = null
      do {
        const query: string = cursor === null ? 'limit=2' : `limit=2&cursor=${cursor}`
        const page = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/webhook-deliveries?${query}`, headers: asScript(owner) })
        const body = page.json<{ items: { id: string }[]; nextCursor: string | null }>()
        seen.push(...body.items.map((item) => item.id))
        cursor = body.nextCursor
        cursors.push(cursor)
      } while (cursor !== null)
      expect(seen.sort()).toEqual([...ids].sort())
      expect(cursors.map((next) => next === null)).toEqual([false, false, true])

      const forged = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/webhook-deliveries?cursor=bm90LWEtY3Vyc29y`, headers: asScript(owner) })
      expect(forged.statusCode).toBe(400)
      expect(forged.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'querystring.cursor' }] })
    })
  })

  describe('isolation', () => {
    describeSiteRouteAuthCases(
      [
        { method: 'GET', path: '/api/v1/sites/{id}/webhook-deliveries', ownerStatus: 200 },
        { method: 'POST', path: '/api/v1/sites/{id}/webhook/test', ownerStatus: 409 },
        { method: 'POST', path: '/api/v1/sites/{id}/webhook-deliveries/{deliveryId}/redeliver', ownerStatus: 409 },
      ],
      () => ({ app: service.app, owner, stranger }),
    )
  })
})
