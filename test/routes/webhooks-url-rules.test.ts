import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'

const webhookSecret = 'a webhook secret of some length'

/**
 * WEBHOOK_ALLOW_PRIVATE=true allows plain http (README), in production as well: the URL that
 * deliveries would send to can be saved, and a test send reaches it.
 */
describe('PUT /api/v1/sites/{id} with NODE_ENV=production and WEBHOOK_ALLOW_PRIVATE=true', () => {
  let service: TestApp
  let account: TestAccount
  let receiver: WebhookReceiver
  beforeAll(async () => {
    service = await buildTestApp({ env: { NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE: 'true' } })
    account = await createTestAccount(service.app)
    receiver = await startWebhookReceiver()
  })
  afterAll(async () => {
    await receiver.close()
    await service.close()
  })

  it('saves a plain-http webhook URL, and the test send delivers to it', async () => {
    const site = await createTestSite(service.app, account)
    const update = await service.app.inject({
      method: 'PUT',
      url: `/api/v1/sites/${site.id}`,
      headers: asScript(account),
      payload: { settings: { webhookUrl: receiver.url, webhookSecret } },
    })
    expect(update.statusCode, update.body).toBe(200)
    expect(update.json().settings).toMatchObject({ webhookUrl: receiver.url, webhookSecretSet: true })

    const sent = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/webhook/test`, headers: asScript(account) })
    expect(sent.json()).toMatchObject({ url: receiver.url, outcome: 'delivered', statusCode: 204 })
  })

  it('still refuses the metadata address', async () => {
    const site = await createTestSite(service.app, account)
    const update = await service.app.inject({
      method: 'PUT',
      url: `/api/v1/sites/${site.id}`,
      headers: asScript(account),
      payload: { settings: { webhookUrl: 'http://169.254.169.254/latest/meta-data/', webhookSecret } },
    })
    expect(update.statusCode).toBe(400)
    expect(update.json().error.details).toEqual([{ field: 'settings.webhookUrl', message: expect.stringMatching(/metadata address/) }])
  })
})
