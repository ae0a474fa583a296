import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { decryptSecret } from '../domain/secret-box.js'
import type { Site } from '../domain/sites/site.js'
import type { DeliveryResult } from '../domain/webhooks/delivery-result.js'
import { buildBlockedPayload, buildTestPayload, type WebhookPayload } from '../domain/webhooks/webhook-payload.js'
import {
  createWebhookDeliveryRepository,
  type WebhookDelivery,
  type WebhookDeliveryRepository,
} from '../storage/sql/webhook-delivery-repository.js'
import { createWebhookAgent } from '../webhooks/guarded-agent.js'
import { sendWebhook } from '../webhooks/send-webhook.js'
import type { VerificationBlockedEvent } from './events.js'

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookService
  }
}

export interface WebhookService {
  /** Sends a signed test event to the site's webhook now; resolves with the recorded delivery. */
  sendTest(site: Site): Promise<WebhookDelivery>
  deliveries: WebhookDeliveryRepository
  /** Resolves once no delivery is in flight (shutdown, tests). */
  settle(): Promise<void>
}

export interface WebhooksOptions {
  /** The spec's delivery timeout is 10 s; tests may shorten it. */
  timeoutMs?: number
}

export const WEBHOOK_TIMEOUT_MS = 10_000
/**
 * A storm of blocked verifications must not become a storm of sockets: beyond this many
 * deliveries in flight for one site, one account or in all, further events are dropped, counted
 * under the outcome `dropped`, logged, and listed in the site's delivery log (a row per minute),
 * instead of queueing without bound behind a slow receiver. The account's share keeps one tenant
 * whose receivers never answer from taking every slot of the instance from the others.
 */
const MAX_IN_FLIGHT_PER_SITE = 10
const MAX_IN_FLIGHT_PER_ACCOUNT = 40
const MAX_IN_FLIGHT = 200
const PRUNE_INTERVAL_MS = 60_000
const DROP_WARNING_INTERVAL_MS = 60_000

/** Deliveries in flight per key (a site, an account); a key with none holds no memory. */
class InFlightCounts {
  readonly #counts = new Map<string, number>()

  of(key: string): number {
    return this.#counts.get(key) ?? 0
  }

  add(key: string): void {
    this.#counts.set(key, this.of(key) + 1)
  }

  remove(key: string): void {
    const remaining = this.of(key) - 1
    if (remaining <= 0) this.#counts.delete(key)
    else this.#counts.set(key, remaining)
  }
}

/**
 * Webhook dispatch: listens for `verification.blocked`, and for each one POSTs the signed payload
 * to the site's webhook without the request that emitted it ever waiting (DESIGN section 7).
 * Every attempt is recorded, counted and, unless delivered, logged with the site and delivery id.
 */
async function webhooksPlugin(app: FastifyInstance, options: WebhooksOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS
  const allowPrivateAddresses = app.config.allowPrivateWebhooks
  const agent = createWebhookAgent({ allowPrivateAddresses, connectTimeoutMs: timeoutMs })
  const deliveries = createWebhookDeliveryRepository(app.database)
  const inFlight = new Set<Promise<unknown>>()
  const inFlightBySite = new InFlightCounts()
  const inFlightByAccount = new InFlightCounts()
  /** Writes about dropped events, which settle() waits for as for deliveries. */
  const bookkeeping = new Set<Promise<void>>()
  const lastPrunedAt = new Map<string, number>()
  const drops = new Map<string, { count: number; warnedAt: number }>()

  function track<T>(siteId: string, work: Promise<T>): Promise<T> {
    inFlight.add(work)
    inFlightBySite.add(siteId)
    const release = () => {
      inFlight.delete(work)
      inFlightBySite.remove(siteId)
    }
    work.then(release, release)
    return work
  }

  async function openSecret(site: Site): Promise<{ secret: string } | DeliveryResult> {
    if (site.webhookSecretCiphertext === null) {
      return { outcome: 'refused', statusCode: null, latencyMs: 0, error: 'the site has no webhook secret; unsigned webhooks are never sent' }
    }
    try {
      return { secret: decryptSecret(app.keyRing.keyFor('webhook-encryption'), site.webhookSecretCiphertext, site.id) }
    } catch {
      return { outcome: 'failed', statusCode: null, latencyMs: 0, error: 'the webhook secret cannot be decrypted (was TOLLGATE_SECRET changed?); set it again' }
    }
  }

  /** One delivery, start to end; resolves with its record and never rejects. */
  async function deliver(site: Site, url: string, payload: WebhookPayload): Promise<WebhookDelivery> {
    const deliveryId = randomUUID()
    const createdAt = new Date()
    const opened = await openSecret(site)
    const result = 'secret' in opened
      ? await sendWebhook({ url, secret: opened.secret, payload, deliveryId }, { dispatcher: agent, timeoutMs, allowPrivateAddresses })
      : opened
    const delivery: WebhookDelivery = {
      id: deliveryId,
      siteId: site.id,
      event: payload.event,
      url,
      isTest: payload.test === true,
      createdAt,
      ...result,
    }
    app.counters.increment('webhookDeliveries', { outcome: result.outcome })
    const context = { siteId: site.id, deliveryId, outcome: result.outcome, statusCode: result.statusCode, latencyMs: result.latencyMs }
    if (result.outcome === 'delivered') app.log.debug(context, 'webhook delivered')
    else app.log.warn({ ...context, error: result.error }, 'webhook delivery failed')
    await deliveries.record(delivery).catch((error: unknown) => {
      app.log.warn({ err: error, siteId: site.id, deliveryId }, 'could not record a webhook delivery')
    })
    await pruneNowAndThen(site.id)
    return delivery
  }

  async function pruneNowAndThen(siteId: string): Promise<void> {
    const now = Date.now()
    if (now - (lastPrunedAt.get(siteId) ?? 0) < PRUNE_INTERVAL_MS) return
    lastPrunedAt.set(siteId, now)
    if (lastPrunedAt.size > 10_000) lastPrunedAt.clear()
    await deliveries.prune(siteId).catch((error: unknown) => app.log.warn({ err: error, siteId }, 'could not prune webhook deliveries'))
  }

  /**
   * Counts a dropped event; once a minute per site, says so in the log and in the site's own
   * delivery log (with how many since the last time), where its operator looks.
   */
  function noteDropped(siteId: string, limit: string): void {
    app.counters.increment('webhookDeliveries', { outcome: 'dropped' })
    const now = Date.now()
    const drop = drops.get(siteId) ?? { count: 0, warnedAt: 0 }
    drop.count += 1
    if (now - drop.warnedAt >= DROP_WARNING_INTERVAL_MS) {
      app.log.warn({ siteId, dropped: drop.count, limit }, 'webhook events dropped: too many deliveries in flight')
      const error = `${drop.count} event(s) dropped since the previous entry of this kind (${limit}); drops in the next minute are counted in the next one`
      const recording = recordDropped(siteId, new Date(now), error)
      bookkeeping.add(recording)
      void recording.finally(() => bookkeeping.delete(recording))
      drop.count = 0
      drop.warnedAt = now
    }
    drops.set(siteId, drop)
  }

  async function recordDropped(siteId: string, createdAt: Date, error: string): Promise<void> {
    try {
      const url = (await app.siteCache.findById(siteId))?.settings.webhookUrl
      if (url === null || url === undefined) return
      await deliveries.record({ id: randomUUID(), siteId, event: 'verification.blocked', url, isTest: false, createdAt, outcome: 'dropped', statusCode: null, latencyMs: 0, error })
    } catch (failure) {
      app.log.warn({ err: failure, siteId }, 'could not record dropped webhook events')
    }
  }

  async function dispatchBlocked(event: VerificationBlockedEvent): Promise<void> {
    const site = await app.siteCache.findById(event.siteId)
    const url = site?.settings.webhookUrl
    if (site === undefined || url === null || url === undefined) return
    const account = site.accountId ?? site.id
    if (inFlightByAccount.of(account) >= MAX_IN_FLIGHT_PER_ACCOUNT) {
      noteDropped(site.id, `${MAX_IN_FLIGHT_PER_ACCOUNT} deliveries in flight for the sites of this account`)
      return
    }
    inFlightByAccount.add(account)
    try {
      await deliver(site, url, buildBlockedPayload(event))
    } finally {
      inFlightByAccount.remove(account)
    }
  }

  // The listener returns at once: the emitter (a verification request) never waits for a
  // delivery, and nothing a delivery does can throw back into it.
  app.events.on('verification.blocked', (event) => {
    const siteFull = inFlightBySite.of(event.siteId) >= MAX_IN_FLIGHT_PER_SITE
    if (siteFull || inFlight.size >= MAX_IN_FLIGHT) {
      const limit = siteFull ? `${MAX_IN_FLIGHT_PER_SITE} deliveries in flight for this site` : `${MAX_IN_FLIGHT} deliveries in flight on this instance`
      noteDropped(event.siteId, limit)
      return
    }
    track(event.siteId, dispatchBlocked(event)).catch((error: unknown) => {
      app.log.error({ err: error, siteId: event.siteId }, 'webhook dispatch failed')
    })
  })

  async function settle(): Promise<void> {
    while (inFlight.size > 0 || bookkeeping.size > 0) await Promise.allSettled([...inFlight, ...bookkeeping])
  }

  const service: WebhookService = {
    async sendTest(site) {
      const url = site.settings.webhookUrl
      if (url === null) throw new Error('sendTest needs a site with a webhook URL')
      return track(site.id, deliver(site, url, buildTestPayload(site.id, new Date())))
    },
    deliveries,
    settle,
  }
  app.decorate('webhooks', service)

  // Runs before the database and the counters close (hooks run in reverse order of
  // registration); every delivery is bounded by its timeout, so this wait is too.
  app.addHook('onClose', async () => {
    await settle()
    await agent.close()
  })
}

export default fp(webhooksPlugin, { name: 'webhooks', dependencies: ['storage', 'metrics', 'events', 'sites'] })
