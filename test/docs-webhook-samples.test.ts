import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encryptSecret } from '../src/domain/secret-box.js'
import { buildSignedHeaders } from '../src/domain/webhooks/sign-webhook.js'
import { buildBlockedPayload, serializePayload } from '../src/domain/webhooks/webhook-payload.js'
import { freePort } from './helpers/free-port.js'
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js'
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
  // A second resend is a duplicate: already processed, which Standard Webhooks counts a success. The
  // samples answer it 200 without acting again (204 when they act): a refusal would be recorded as a
  // failed delivery, and feed TollgateWebhookDeliveriesFailing.
  it('takes the resend of an event an hour old, and a second one as a duplicate: delivered, not acted on again', async () => {
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })
    const missed = await recordMissedDelivery(service.app, site.id, receiver.url, new Date(Date.now() - 3_600_000))
    expect(await service.app.webhooks.redeliver(site, missed)).toMatchObject({ outcome: 'delivered', statusCode: 204, redeliveryOf: missed.id })
    expect(await service.app.webhooks.redeliver(site, missed)).toMatchObject({ outcome: 'delivered', statusCode: 200, redeliveryOf: missed.id })
  })

  it('refuses a forged signature', async () => {
    const forged = signedRequest(randomUUID(), 'a secret the receiver does not know')
    expect((await fetch(receiver.url, { method: 'POST', headers: forged.headers, body: forged.body })).status).toBe(401)
  })

  // The Standard Webhooks sample, as a receiver not yet moved to a site's new secret.
  it.runIf(index === 1)('takes deliveries signed beside a new secret with the one it replaced, until that one stops', async () => {
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: SECRET })
    await replaceWebhookSecret(service.app, site.id, `whsec_${randomBytes(32).toString('base64')}`)
    service.app.events.emit('verification.blocked', { ...blockedEvent(site.id), timestamp: new Date() })
    await service.app.webhooks.settle()
    await service.app.database.query("UPDATE sites SET previous_webhook_secret_expires_at = now() - interval '1 second' WHERE id = $1", [site.id])
    await service.app.siteCache.invalidate(site)
    service.app.events.emit('verification.blocked', { ...blockedEvent(site.id), timestamp: new Date() })
    await service.app.webhooks.settle()

    const deliveries = await service.app.webhooks.deliveries.listRecent(site.id, 10)
    expect(deliveries.map(({ outcome, statusCode }) => ({ outcome, statusCode }))).toEqual([
      { outcome: 'failed', statusCode: 401 },
      { outcome: 'delivered', statusCode: 204 },
    ])
  })

  it.runIf(index === 0)('refuses an event an hour old that is not a resend', async () => {
    const stale = signedRequest(randomUUID(), SECRET, new Date(Date.now() - 3_600_000))
    expect((await fetch(receiver.url, { method: 'POST', headers: stale.headers, body: stale.body })).status).toBe(409)
  })

  it.runIf(index === 0)('does not act on the same delivery sent again, and answers it as already processed', async () => {
    const genuine = signedRequest(randomUUID())
    expect((await fetch(receiver.url, { method: 'POST', headers: genuine.headers, body: genuine.body })).status).toBe(204)
    // Captured and replayed, under a new X-Service-Delivery (the header is not signed).
    const replayed = { ...genuine.headers, 'X-Service-Delivery': randomUUID() }
    expect((await fetch(receiver.url, { method: 'POST', headers: replayed, body: genuine.body })).status).toBe(200)
  })

  // A receiver whose clock is behind Tollgate's sees timestamps from its future. Ten minutes
  // ahead, an id remembered for 5 minutes from its arrival would be forgotten while its timestamp
  // still passed; the sample refuses such timestamps, and keeps ids as long as theirs pass.
  it.runIf(index === 0)('refuses a delivery timestamped more than a minute ahead of its clock, and takes one 30 s ahead once', async () => {
    const ahead = signedRequest(randomUUID(), SECRET, new Date(Date.now() + 10 * 60_000))
    expect((await fetch(receiver.url, { method: 'POST', headers: ahead.headers, body: ahead.body })).status).toBe(409)
    const skewed = signedRequest(randomUUID(), SECRET, new Date(Date.now() + 30_000))
    expect((await fetch(receiver.url, { method: 'POST', headers: skewed.headers, body: skewed.body })).status).toBe(204)
    expect((await fetch(receiver.url, { method: 'POST', headers: skewed.headers, body: skewed.body })).status).toBe(200)
  })
})

it('finds both receiver samples in docs/webhooks.md', () => {
  expect(samples).toHaveLength(2)
})

/** A verification blocked at `blockedAt` whose event's delivery timed out then: what an operator resends. */
async function recordMissedDelivery(app: TestApp['app'], siteId: string, url: string, blockedAt: Date) {
  const [verificationId] = await insertVerifications(app.database, [
    { siteId, createdAt: blockedAt, action: 'block', riskScore: 90, anomalies: ['datacenter_ip'], countryCode: 'NL', hostname: 'shop.example' },
  ])
  const missed = {
    id: randomUUID(), siteId, event: 'verification.blocked' as const, url, isTest: false, verificationId: verificationId!, redeliveryOf: null,
    outcome: 'timeout' as const, statusCode: null, latencyMs: 10_000, error: 'no answer within 10 s', createdAt: blockedAt,
  }
  await app.webhooks.deliveries.record(missed)
  return missed
}

/** A new webhook secret for the site, the one it replaces signing beside it for 24 hours (as PUT /sites/{id} does). */
async function replaceWebhookSecret(app: TestApp['app'], siteId: string, secret: string): Promise<void> {
  await app.sites.update(siteId, {
    webhookSecretCiphertext: encryptSecret(app.keyRing.keyFor('webhook-encryption'), secret, siteId),
    previousWebhookSecretExpiresAt: new Date(Date.now() + 24 * 3_600_000),
  })
}

const codeBlocks = [...readFileSync('docs/webhooks.md', 'utf8').matchAll(/```([a-z]+)\n([\s\S]*?)```/g)]
const [pythonSample = '', javaSample = '', phpSample = ''] = ['python', 'java', 'php'].map((language) => codeBlocks.find(([, found]) => found === language)?.[2] ?? '')

/** Runs the sample with a harness that verifies one delivery saved in `directory`; answers [webhook-signature, X-Service-Signature]. */
function runVerifier(language: 'python' | 'java' | 'php', directory: string, secret: string): [boolean, boolean] {
  const headers = join(directory, 'headers')
  const body = join(directory, 'body')
  if (language === 'python') {
    const harness = `${pythonSample}
import sys
headers = json.load(open(sys.argv[2]))
raw_body = open(sys.argv[3], 'rb').read()
print(json.dumps([verify_standard_webhooks(sys.argv[1], headers, raw_body), verify_service_signature(sys.argv[1], headers, raw_body)]))
`
    const ran = spawnSync('python3', ['-c', harness, secret, `${headers}.json`, body], { encoding: 'utf8' })
    expect(ran.stderr).toBe('')
    return JSON.parse(ran.stdout) as [boolean, boolean]
  }
  if (language === 'php') {
    const harness = `${phpSample}
$headers = json_decode(file_get_contents($argv[2]), true);
$raw_body = file_get_contents($argv[3]);
echo json_encode([verify_standard_webhooks($argv[1], $headers, $raw_body), verify_service_signature($argv[1], $headers, $raw_body)]);
`
    const file = join(directory, 'harness.php')
    writeFileSync(file, harness)
    // Every notice, warning and deprecation to stderr, which must stay empty.
    const ran = spawnSync('php', ['-d', 'error_reporting=-1', '-d', 'display_errors=stderr', file, secret, `${headers}.json`, body], { encoding: 'utf8' })
    expect(ran.stderr).toBe('')
    return JSON.parse(ran.stdout) as [boolean, boolean]
  }
  // The launcher runs a source file's first class: the harness goes between the sample's imports and its class.
  const imports = javaSample.split('\n').filter((line) => line.startsWith('import ')).join('\n')
  const rest = javaSample.split('\n').filter((line) => !line.startsWith('import ')).join('\n')
  const harness = `${imports}
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.regex.Pattern;
class Harness {
  public static void main(String[] args) throws Exception {
    Map<String, String> headers = new HashMap<>();
    for (String line : Files.readAllLines(Path.of(args[1] + ".txt"))) headers.put(line.substring(0, line.indexOf('\t')), line.substring(line.indexOf('\t') + 1));
    byte[] rawBody = Files.readAllBytes(Path.of(args[2]));
    var timestamp = Pattern.compile("\\"timestamp\\":\\"([^\\"]+)\\"").matcher(new String(rawBody, StandardCharsets.UTF_8));
    timestamp.find();
    var redeliveredAt = Pattern.compile("\\"redeliveredAt\\":\\"([^\\"]+)\\"").matcher(new String(rawBody, StandardCharsets.UTF_8));
    String resentAt = redeliveredAt.find() ? redeliveredAt.group(1) : null;
    System.out.println("[" + TollgateWebhooks.verifyStandardWebhooks(args[0], headers, rawBody) + ","
      + (TollgateWebhooks.verifyServiceSignature(args[0], headers, rawBody) && TollgateWebhooks.isRecent(timestamp.group(1), resentAt)) + "]");
  }
}
${rest}`
  const file = join(directory, 'Harness.java')
  writeFileSync(file, harness)
  const ran = spawnSync('java', [file, secret, headers, body], { encoding: 'utf8' })
  expect(ran.stderr).toBe('')
  return JSON.parse(ran.stdout) as [boolean, boolean]
}

describe('the Python 3, Java 17 and PHP 8 verifiers of docs/webhooks.md', () => {
  let service: TestApp
  let receiver: WebhookReceiver
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-verifiers-'))
  const oldSecret = `whsec_${randomBytes(32).toString('base64')}`
  const newSecret = 'a plain-text secret, 0123456789'

  beforeAll(async () => {
    service = await buildTestApp()
    receiver = await startWebhookReceiver()
  })
  afterAll(async () => {
    await receiver?.close()
    await service?.close()
    rmSync(directory, { recursive: true, force: true })
  })

  /** The site's next delivery (a block now, unless `send` sends another), as its receiver got it, saved for the samples. */
  async function saveDelivery(siteId: string, send: () => Promise<unknown> = async () => { service.app.events.emit('verification.blocked', { ...blockedEvent(siteId), timestamp: new Date() }) }): Promise<void> {
    const index = receiver.received.length
    await send()
    const { headers, body } = await receiver.waitForRequest(index)
    await service.app.webhooks.settle()
    const named = Object.entries(headers).map(([name, value]) => [name, String(value)])
    writeFileSync(join(directory, 'headers.json'), JSON.stringify(Object.fromEntries(named)))
    writeFileSync(join(directory, 'headers.txt'), named.map(([name, value]) => `${name}\t${value}`).join('\n'))
    writeFileSync(join(directory, 'body'), body)
  }

  it('finds the three samples', () => {
    expect(pythonSample).toContain('def verify_standard_webhooks')
    expect(javaSample).toContain('static boolean verifyStandardWebhooks')
    expect(phpSample).toContain('function verify_standard_webhooks')
  })

  it.each(['python', 'java', 'php'] as const)('%s: verifies a real delivery with the new secret, with the replaced one while it signs (webhook-signature only), and never with another', { timeout: 120_000 }, async (language) => {
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: oldSecret })
    await replaceWebhookSecret(service.app, site.id, newSecret)
    await saveDelivery(site.id)
    expect(runVerifier(language, directory, newSecret)).toEqual([true, true])
    expect(runVerifier(language, directory, oldSecret)).toEqual([true, false])
    expect(runVerifier(language, directory, 'a secret nobody was given')).toEqual([false, false])

    await service.app.database.query("UPDATE sites SET previous_webhook_secret_expires_at = now() - interval '1 second' WHERE id = $1", [site.id])
    await service.app.siteCache.invalidate(site)
    await saveDelivery(site.id)
    expect(runVerifier(language, directory, oldSecret)).toEqual([false, false])
    expect(runVerifier(language, directory, newSecret)).toEqual([true, true])
  })

  // An operator's resend of an event missed an hour ago keeps its timestamp and adds a fresh
  // redeliveredAt: a sample that judged the body's age by timestamp alone would refuse every resend.
  it.each(['python', 'java', 'php'] as const)('%s: takes the resend of an event an hour old, and refuses that event sent an hour late without redeliveredAt', { timeout: 120_000 }, async (language) => {
    const site = await createWebhookSite(service.app, { webhookUrl: receiver.url, secret: newSecret })
    const blockedAt = new Date(Date.now() - 3_600_000)
    const missed = await recordMissedDelivery(service.app, site.id, receiver.url, blockedAt)
    await saveDelivery(site.id, () => service.app.webhooks.redeliver(site, missed))
    const resent = JSON.parse(readFileSync(join(directory, 'body'), 'utf8')) as { timestamp: string; redeliveredAt?: string }
    expect(Date.parse(resent.timestamp)).toBe(blockedAt.getTime())
    expect(resent.redeliveredAt).toBeDefined()
    expect(runVerifier(language, directory, newSecret)).toEqual([true, true])

    // Only webhook-timestamp, the time of sending, is fresh: webhook-signature passes, the body's check does not.
    await saveDelivery(site.id, async () => { service.app.events.emit('verification.blocked', { ...blockedEvent(site.id), timestamp: blockedAt }) })
    expect(runVerifier(language, directory, newSecret)).toEqual([true, false])
  })
})
