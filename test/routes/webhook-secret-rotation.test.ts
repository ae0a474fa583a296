import { randomBytes } from 'node:crypto'
import { verify } from '@octokit/webhooks-methods'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver.js'
import { blockedEvent } from '../helpers/webhook-site.js'

/** The dashboard's Generate form: `whsec_` + padded base64 of 32 random bytes. */
const generatedSecret = () => `whsec_${randomBytes(32).toString('base64')}`

/** A receiver verifying with the Standard Webhooks library and the secret it was given, unchanged. */
function passesStandardWebhooks(secret: string, delivery: ReceivedWebhook): boolean {
  try {
    new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>)
    return true
  } catch {
    return false
  }
}

describe.each(deployments.filter(({ available }) => available))('replacing a webhook secret ($name)', ({ options }) => {
  let service: TestApp
  let account: TestAccount
  let receiver: WebhookReceiver

  beforeAll(async () => {
    service = await buildTestApp(options)
    account = await createTestAccount(service.app)
    receiver = await startWebhookReceiver()
  })
  afterAll(async () => {
    await receiver?.close()
    await service?.close()
  })

  const update = (id: string, settings: object) =>
    service.app.inject({ method: 'PUT', url: `/api/v1/sites/${id}`, headers: asScript(account), payload: { settings } })
  const read = async (id: string) =>
    (await service.app.inject({ method: 'GET', url: `/api/v1/sites/${id}`, headers: asScript(account) })).json<{ settings: Record<string, unknown> }>()
  /** A blocked verification of the site, as its receiver gets it. */
  async function deliveryOf(siteId: string): Promise<ReceivedWebhook> {
    const index = receiver.received.length
    service.app.events.emit('verification.blocked', blockedEvent(siteId))
    const delivery = await receiver.waitForRequest(index)
    await service.app.webhooks.settle()
    return delivery
  }

  it('signs webhook-signature with the new and the old secret for 24 hours, X-Service-Signature with the new alone; after that, the new alone', async () => {
    const oldSecret = generatedSecret()
    const newSecret = generatedSecret()
    const site = await createTestSite(service.app, account, { settings: { webhookUrl: receiver.url, webhookSecret: oldSecret } })
    expect(site.settings).toMatchObject({ webhookSecretSet: true, previousWebhookSecretExpiresAt: null })

    const before = Date.now()
    const replaced = await update(site.id, { webhookSecret: newSecret })
    expect(replaced.statusCode, replaced.body).toBe(200)
    const expiresAt = Date.parse(String(replaced.json().settings.previousWebhookSecretExpiresAt))
    expect(expiresAt).toBeGreaterThanOrEqual(before + 24 * 3_600_000)
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 24 * 3_600_000)
    expect((await read(site.id)).settings.previousWebhookSecretExpiresAt).toBe(replaced.json().settings.previousWebhookSecretExpiresAt)

    const during = await deliveryOf(site.id)
    // Sent in one piece, with its length (docs/webhooks.md, "Headers").
    expect(during.headers['content-length']).toBe(String(Buffer.byteLength(during.body)))
    expect(during.headers['transfer-encoding']).toBeUndefined()
    expect(during.headers['user-agent']).toBe('Tollgate-Webhooks/1')
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2)
    // A receiver not yet moved keeps verifying; one already moved verifies too.
    expect(passesStandardWebhooks(oldSecret, during)).toBe(true)
    expect(passesStandardWebhooks(newSecret, during)).toBe(true)
    // The spec's header is one value, the new secret's.
    const serviceSignature = String(during.headers['x-service-signature'])
    expect(await verify(newSecret, during.body, serviceSignature)).toBe(true)
    expect(await verify(oldSecret, during.body, serviceSignature)).toBe(false)

    // The overlap over (as 24 hours later), the old secret no longer verifies.
    await service.app.database.query("UPDATE sites SET previous_webhook_secret_expires_at = now() - interval '1 second' WHERE id = $1", [site.id])
    await service.app.siteCache.invalidate(site)
    expect((await read(site.id)).settings.previousWebhookSecretExpiresAt).toBeNull()
    const after = await deliveryOf(site.id)
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(passesStandardWebhooks(oldSecret, after)).toBe(false)
    expect(passesStandardWebhooks(newSecret, after)).toBe(true)
    expect(await verify(newSecret, after.body, String(after.headers['x-service-signature']))).toBe(true)
  })

  it('ends the overlap on previousWebhookSecretExpiresAt: null, alone or with the new secret; sending the same secret again changes nothing', async () => {
    const first = generatedSecret()
    const second = 'a plain secret, 0123456789'
    const site = await createTestSite(service.app, account, { settings: { webhookUrl: receiver.url, webhookSecret: first } })
    const replaced = await update(site.id, { webhookSecret: second })
    const expiresAt = replaced.json().settings.previousWebhookSecretExpiresAt
    expect(expiresAt).not.toBeNull()
    // The same secret again (a form saved twice) neither restarts nor ends the overlap.
    expect((await update(site.id, { webhookSecret: second })).json().settings.previousWebhookSecretExpiresAt).toBe(expiresAt)
    expect(passesStandardWebhooks(first, await deliveryOf(site.id))).toBe(true)

    const ended = await update(site.id, { previousWebhookSecretExpiresAt: null })
    expect(ended.statusCode, ended.body).toBe(200)
    expect(ended.json().settings.previousWebhookSecretExpiresAt).toBeNull()
    expect(passesStandardWebhooks(first, await deliveryOf(site.id))).toBe(false)
    // The log tells when the overlap began and that it was ended early (never the secrets).
    const log = await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${site.id}&action=site.updated`, headers: asScript(account) })
    const updates = log.json<{ items: { details: { changes: object[] } }[] }>().items.map((event) => event.details.changes).reverse()
    expect(updates).toEqual([
      [{ field: 'webhookSecret', from: true, to: true }, { field: 'previousWebhookSecret', from: null, to: expiresAt }],
      // The same secret sent again changed nothing: no event.
      [{ field: 'previousWebhookSecret', from: expiresAt, to: null }],
    ])
    expect(log.body).not.toContain(second)

    // A leaked secret replaced with no overlap at all.
    const third = generatedSecret()
    const leaked = await update(site.id, { webhookSecret: third, previousWebhookSecretExpiresAt: null })
    expect(leaked.json().settings.previousWebhookSecretExpiresAt).toBeNull()
    const delivery = await deliveryOf(site.id)
    expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(passesStandardWebhooks(third, delivery)).toBe(true)
  })

  it('forgets the replaced secret when the URL or the secret is removed', async () => {
    const site = await createTestSite(service.app, account, { settings: { webhookUrl: receiver.url, webhookSecret: generatedSecret() } })
    await update(site.id, { webhookSecret: generatedSecret() })
    expect((await service.app.sites.findById(site.id))?.previousWebhookSecret).not.toBeNull()
    // Removing the URL while setting a new secret: the new one is kept, no secret from before.
    const removed = await update(site.id, { webhookUrl: null, webhookSecret: generatedSecret() })
    expect(removed.json().settings).toMatchObject({ webhookSecretSet: true, previousWebhookSecretExpiresAt: null })
    expect((await service.app.sites.findById(site.id))?.previousWebhookSecret).toBeNull()

    await update(site.id, { webhookSecret: generatedSecret() })
    expect((await service.app.sites.findById(site.id))?.previousWebhookSecret).not.toBeNull()
    const cleared = await update(site.id, { webhookSecret: null })
    expect(cleared.json().settings).toMatchObject({ webhookSecretSet: false, previousWebhookSecretExpiresAt: null })
    const stored = await service.app.database.query<{ previous_webhook_secret_ciphertext: string | null }>(
      'SELECT previous_webhook_secret_ciphertext FROM sites WHERE id = $1',
      [site.id],
    )
    expect(stored[0]?.previous_webhook_secret_ciphertext).toBeNull()
  })

  it('keeps no replaced secret that cannot be opened (sealed under another TOLLGATE_SECRET): no delivery could sign with it', async () => {
    const site = await createTestSite(service.app, account, { settings: { webhookUrl: receiver.url, webhookSecret: generatedSecret() } })
    await service.app.sites.update(site.id, { webhookSecretCiphertext: 'v1.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA' })
    const newSecret = generatedSecret()
    const replaced = await update(site.id, { webhookSecret: newSecret })
    expect(replaced.statusCode, replaced.body).toBe(200)
    expect(replaced.json().settings).toMatchObject({ webhookSecretSet: true, previousWebhookSecretExpiresAt: null })
    expect((await service.app.sites.findById(site.id))?.previousWebhookSecret).toBeNull()
    const delivery = await deliveryOf(site.id)
    expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(passesStandardWebhooks(newSecret, delivery)).toBe(true)
  })

  it("takes the dashboard's generated whsec_ secret, which both schemes' libraries verify with unchanged", async () => {
    const secret = generatedSecret()
    const site = await createTestSite(service.app, account, { settings: { webhookUrl: receiver.url, webhookSecret: secret } })
    expect(site.settings).toMatchObject({ webhookSecretSet: true })
    const delivery = await deliveryOf(site.id)
    expect(passesStandardWebhooks(secret, delivery)).toBe(true)
    expect(await verify(secret, delivery.body, String(delivery.headers['x-service-signature']))).toBe(true)
  })
})
