import { afterAll, describe, expect, it } from 'vitest'
import { buildTestPayload } from '../../src/domain/webhooks/webhook-payload.js'
import { createWebhookAgent } from '../../src/webhooks/guarded-agent.js'
import { sendWebhook } from '../../src/webhooks/send-webhook.js'

describe('sendWebhook', () => {
  // A name whose lookup never answers, behind a connector that would wait 5 s for it.
  const agent = createWebhookAgent({ allowPrivateAddresses: false, connectTimeoutMs: 5_000, resolve: () => new Promise(() => {}) })
  afterAll(() => agent.destroy())

  it('ends an attempt stuck in the name lookup at the delivery timeout, not the connector’s', async () => {
    const deliveryId = crypto.randomUUID()
    const started = performance.now()
    const result = await sendWebhook(
      { url: 'https://hooks.example.com/tollgate', secret: 'a secret', deliveryId, payload: buildTestPayload(crypto.randomUUID(), new Date(), deliveryId) },
      { dispatcher: agent, timeoutMs: 300, allowPrivateAddresses: false },
    )
    const elapsed = performance.now() - started

    expect(result).toMatchObject({ outcome: 'timeout', statusCode: null, error: 'no answer within 300 ms' })
    expect(result.latencyMs).toBeGreaterThanOrEqual(295)
    expect(elapsed).toBeLessThan(1_000)
  })
})
