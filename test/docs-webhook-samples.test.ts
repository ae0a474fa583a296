import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildSignedHeaders } from '../src/domain/webhooks/sign-webhook.js'
import { buildBlockedPayload, serializePayload } from '../src/domain/webhooks/webhook-payload.js'
import { freePort } from './helpers/free-port.js'
import { buildTestApp, type TestApp } from './helpers/test-app.js'
import { insertVerifications } from './helpers/verification-rows.js'
import { blockedEvent, createWebhookSite } from './helpers/webhook-site.js'

/**
 * The receivers of docs/webhooks.md, run as written (only the port changed), against real
 * deliveries: what a developer who copies them gets.
 */
const samples = [...readFileSync('docs/webhooks.md', 'utf8').matchAll(/```js\n([\s\S]*?)```/g)]
  .map(([, code = '']) => code)
  .filter((code) => code.includes('http.createServer'))

const SECRET = 'the secret both sides were given'

async function startSample(code: string): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort()
  const child = spawn(process.execPath, ['--input-type=module', '-e', code.replace('.listen(8080)', `.listen(${port}, '127.0.0.1')`)], {
    env: { ...process.env, TOLLGATE_WEBHOOK_SECRET: SECRET },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const url = `http://127.0.0.1:${port}/hooks/tollgate`
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (await fetch(url, { method: 'POST', body: '{}' }).then(() => true, () => false)) return { url, process: child }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('the sample receiver did not start')
}

function signedRequest(siteId: string, secret = SECRET, timestamp = new Date()): { body: string; headers: Record<string, string> } {
  const deliveryId = randomUUID()
  const body = serializePayload(buildBlockedPayload({ ...blockedEvent(siteId), timestamp, riskScore: 90, anomalies: ['datacenter_ip'] }, deliveryId))
  return { body: body.toString('utf8'), headers: buildSignedHeaders({ secret, event: 'verification.blocked', deliveryId, body, sentAt: new Date() }) }
}

describe.each(samples.map((code, index) => ({ code, index })))('the receiver sample $index of docs/webhooks.md', ({ code, index }) => {
  let service: TestApp
  let receiver: { url: string; process: ChildProcess }

  beforeAll(async () => {
    service = await buildTestApp()
    receiver = await startSample(code)
  })
  afterAll(async () => {
    receiver?.process.kill()
    await service?.close()
  })

  it('takes two blocks of one site in the same millisecond, alike but for their delivery, as two events', async () => {
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })
    const event = { ...blockedEvent(site.id), timestamp: new Date(), riskScore: 95, anomalies: ['bot_user_agent'] }
    service.app.events.emit('verification.blocked', event)
    service.app.events.emit('verification.blocked', event)
    await service.app.webhooks.settle()

    const deliveries = await service.app.webhooks.deliveries.listRecent(site.id, 10)
    expect(deliveries.map(({ outcome, statusCode }) => ({ outcome, statusCode }))).toEqual([
      { outcome: 'delivered', statusCode: 204 },
      { outcome: 'delivered', statusCode: 204 },
    ])
  })

  // An operator resends an event its receiver missed an hour ago (POST .../redeliver): its
  // timestamp is the block's, its redeliveredAt (and webhook-timestamp) this sending's.
  it('takes the resend of an event an hour old (the first sample drops a second one as a duplicate)', async () => {
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })
    const blockedAt = new Date(Date.now() - 3_600_000)
    const [verificationId] = await insertVerifications(service.app.database, [
      { siteId: site.id, createdAt: blockedAt, action: 'block', riskScore: 90, anomalies: ['datacenter_ip'], countryCode: 'NL', hostname: 'shop.example' },
    ])
    const missed = {
      id: randomUUID(), siteId: site.id, event: 'verification.blocked' as const, url: receiver.url, isTest: false, verificationId: verificationId!, redeliveryOf: null,
      outcome: 'timeout' as const, statusCode: null, latencyMs: 10_000, error: 'no answer within 10 s', createdAt: blockedAt,
    }
    await service.app.webhooks.deliveries.record(missed)
    expect(await service.app.webhooks.redeliver(site, missed)).toMatchObject({ outcome: 'delivered', statusCode: 204, redeliveryOf: missed.id })
    // The first sample remembers the ids it took; the second leaves that to its reader (a comment).
    if (index === 0) expect(await service.app.webhooks.redeliver(site, missed)).toMatchObject({ outcome: 'failed', statusCode: 409 })
  })

  it('refuses a forged signature', async () => {
    const forged = signedRequest(randomUUID(), 'a secret the receiver does not know')
    expect((await fetch(receiver.url, { method: 'POST', headers: forged.headers, body: forged.body })).status).toBe(401)
  })

  it.runIf(index === 0)('refuses the same delivery sent again', async () => {
    const genuine = signedRequest(randomUUID())
    expect((await fetch(receiver.url, { method: 'POST', headers: genuine.headers, body: genuine.body })).status).toBe(204)
    // Captured and replayed, under a new X-Service-Delivery (the header is not signed).
    const replayed = { ...genuine.headers, 'X-Service-Delivery': randomUUID() }
    expect((await fetch(receiver.url, { method: 'POST', headers: replayed, body: genuine.body })).status).toBe(409)
  })

  // A receiver whose clock is behind Tollgate's sees timestamps from its future. Ten minutes
  // ahead, an id remembered for 5 minutes from its arrival would be forgotten while its timestamp
  // still passed; the sample refuses such timestamps, and keeps ids as long as theirs pass.
  it.runIf(index === 0)('refuses a delivery timestamped more than a minute ahead of its clock, and takes one 30 s ahead once', async () => {
    const ahead = signedRequest(randomUUID(), SECRET, new Date(Date.now() + 10 * 60_000))
    expect((await fetch(receiver.url, { method: 'POST', headers: ahead.headers, body: ahead.body })).status).toBe(409)
    const skewed = signedRequest(randomUUID(), SECRET, new Date(Date.now() + 30_000))
    expect((await fetch(receiver.url, { method: 'POST', headers: skewed.headers, body: skewed.body })).status).toBe(204)
    expect((await fetch(receiver.url, { method: 'POST', headers: skewed.headers, body: skewed.body })).status).toBe(409)
  })
})

it('finds both receiver samples in docs/webhooks.md', () => {
  expect(samples).toHaveLength(2)
})
