import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { livePreviousWebhookSecret, type Site } from '../domain/sites/site.js'
import type { DeliveryResult } from '../domain/webhooks/delivery-result.js'
import {
  buildBlockedPayload,
  buildRedeliveredPayload,
  buildSurgePayload,
  buildTestPayload,
  SURGE_ENDED,
  SURGE_STARTED,
  VERIFICATION_BLOCKED,
  verificationIdOf,
  type BlockedVerification,
  type WebhookEvent,
  type WebhookPayload,
} from '../domain/webhooks/webhook-payload.js'
import { ApiError } from '../errors.js'
import {
  createWebhookDeliveryRepository,
  type WebhookDelivery,
  type WebhookDeliveryRepository,
} from '../storage/sql/webhook-delivery-repository.js'
import { createVerificationQueryRepository, type LogEntry } from '../storage/sql/verification-query-repository.js'
import { openWebhookSecret } from '../routes/v1/sites/site-rules.js'
import { createWebhookAgent } from '../webhooks/guarded-agent.js'
import { sendWebhook } from '../webhooks/send-webhook.js'

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookService
  }
}

export interface WebhookService {
  /**
   * Sends a signed test event to the site's webhook now; resolves with the recorded delivery.
   * Throws 429 rate_limited (an ApiError) while the test sends' own slots are taken; else runs
   * `admit` (a budget that may throw) holding a slot, then sends a sample of `event`
   * (verification.blocked by default).
   */
  sendTest(site: Site, admit?: () => Promise<void>, event?: WebhookEvent): Promise<WebhookDelivery>
  /**
   * Sends the verification.blocked event `original` told of again now, rebuilt from the
   * verification's row, under its first delivery's id, signed as a new event is (the site's current
   * secret, and during a rotation's overlap its replaced one too) to its current URL; resolves with the new, recorded delivery. In the test sends' slots, with the
   * same 429 and `admit` as sendTest. Throws 409 webhook_event_not_redeliverable for a delivery
   * of no real block, 410 webhook_event_expired once the verification's row is gone (retention or an erasure).
   */
  redeliver(site: Site, original: WebhookDelivery, admit?: () => Promise<void>): Promise<WebhookDelivery>
  deliveries: WebhookDeliveryRepository
  /** Writes the pending counts of dropped events, then resolves once nothing waits or is in flight (shutdown, tests). */
  settle(): Promise<void>
}

export interface WebhooksOptions {
  /** The spec's delivery timeout is 10 s; tests may shorten it. */
  timeoutMs?: number
}

export const WEBHOOK_TIMEOUT_MS = 10_000
/**
 * A storm of blocked verifications must not become a storm of sockets: at most this many
 * deliveries are in flight for one site, one account or in all. An event over a site's share or
 * the instance's waits, in its site's line, for a slot; beyond the lines' room (or over the
 * account's share, which keeps one tenant whose receivers never answer from taking every slot of
 * the instance), it is dropped: counted under the outcome `dropped`, logged, and listed in the
 * site's delivery log (a row per minute), instead of queueing without bound behind a slow receiver.
 */
const MAX_IN_FLIGHT_PER_SITE = 10
const MAX_IN_FLIGHT_PER_ACCOUNT = 40
const MAX_IN_FLIGHT = 200
/**
 * Events waiting for a slot, per site and in all. A burst against a receiver that takes half a
 * second is delivered in full (10 at a time) instead of losing all but the first ten; the wait is
 * bounded too: a receiver that never answers takes 10 events per delivery timeout.
 */
const MAX_WAITING_PER_SITE = 100
const MAX_WAITING = 2_000
/**
 * Test sends have slots of their own, apart from the ones above. An account may hold 100 sites
 * with 10 test sends a minute each: in the shared slots, one tenant's test sends to a receiver
 * that never answers could hold all 200, and every other tenant's real events would be dropped.
 * Beyond these, a test send answers 429 at once (its operator is waiting for the answer).
 */
const MAX_TEST_SENDS_PER_ACCOUNT = 5
const MAX_TEST_SENDS = 25
const PRUNE_INTERVAL_MS = 60_000
/** Dropped events are reported once per site and window: the window starts at the first drop. */
const DROP_REPORT_WINDOW_MS = 60_000
/** Sites with a report pending, at most; past it, the oldest report is written early. */
const MAX_PENDING_DROP_REPORTS = 10_000

/** Work in flight, in all and per key (a site, an account); a key with none holds no memory. */
class InFlight {
  readonly #all = new Set<Promise<unknown>>()
  readonly #counts = new Map<string, number>()

  get size(): number {
    return this.#all.size
  }

  of(key: string): number {
    return this.#counts.get(key) ?? 0
  }

  /** Counts `work` under `key` until it settles; returns it. */
  hold<T>(key: string, work: Promise<T>): Promise<T> {
    this.#all.add(work)
    this.#counts.set(key, this.of(key) + 1)
    const release = () => {
      this.#all.delete(work)
      const remaining = this.of(key) - 1
      if (remaining <= 0) this.#counts.delete(key)
      else this.#counts.set(key, remaining)
    }
    work.then(release, release)
    return work
  }

  /** What is in flight now, to wait for. */
  current(): Promise<unknown>[] {
    return [...this.#all]
  }
}

/** An event on its way to a site's webhook. */
interface SiteEvent {
  kind: WebhookEvent
  siteId: string
  /**
   * The site as the emitter read it, when it did: an event sent at once needs no database read
   * (which may fail). One that waited for a slot reads its site again (dispatch).
   */
  site?: Site
  payloadFor: (deliveryId: string) => WebhookPayload
}

/**
 * An alert (surge.started, surge.ended: every kind but blocked verifications) goes ahead of its
 * site's waiting line and past the caps that drop events: there are two per surge for the whole
 * fleet, and a flood of blocked verifications is when its operator most needs to hear of it.
 */
function isAlert(event: Pick<SiteEvent, 'kind'>): boolean {
  return event.kind !== VERIFICATION_BLOCKED
}

/** Whether the site's webhook is to be sent events of this kind. */
function wants(site: Site, kind: WebhookEvent): boolean {
  return site.settings.webhookUrl !== null && site.settings.webhookEvents.includes(kind)
}

/** Events of one kind dropped for one site since its window's first drop, written as one entry when the window ends. */
interface PendingDrops {
  siteId: string
  kind: WebhookEvent
  count: number
  /** How many each limit dropped, the limits in the words of the entry. */
  limits: Map<string, number>
  since: Date
  timer: NodeJS.Timeout
}

/** Whose share a site's deliveries count against: its account's (a site without one stands alone). */
function shareOf(site: Site): string {
  return site.accountId ?? site.id
}

/** Why a delivery's event cannot be sent again (it is not a real block's, or predates the column naming it). */
function notRedeliverableReason(delivery: WebhookDelivery): string {
  if (delivery.isTest) return 'A test send is not sent again: send a new one (POST .../webhook/test).'
  if (delivery.outcome === 'dropped') return 'This row counts events dropped for want of a slot: they were never sent and are not kept, so there is nothing to send again.'
  if (delivery.event !== VERIFICATION_BLOCKED) return `Only verification.blocked events can be sent again: a ${delivery.event} event is not kept.`
  return 'This delivery was recorded before deliveries named their verification, so its event cannot be rebuilt.'
}

/** A blocked verification as its row in the log holds it: every field its event carried; undefined for a row of no block. */
function blockedVerificationOf(row: LogEntry): BlockedVerification | undefined {
  if (row.action !== 'block' || row.riskScore === null) return undefined
  return {
    siteId: row.siteId,
    timestamp: row.createdAt,
    riskScore: row.riskScore,
    anomalies: row.anomalies,
    countryCode: row.countryCode ?? 'XX',
    verificationId: row.id,
    device: row.device,
    hostname: row.hostname,
    pageAction: row.pageAction,
  }
}

/**
 * Webhook dispatch: listens for `verification.blocked`, `surge.started` and `surge.ended`, and
 * for each one a site's webhook asks for, POSTs the signed payload to it without the request (or
 * the surge meter) that emitted it ever waiting (DESIGN section 7).
 * Every attempt is recorded, counted and, unless delivered, logged with the site and delivery id.
 */
async function webhooksPlugin(app: FastifyInstance, options: WebhooksOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS
  const allowPrivateAddresses = app.config.allowPrivateWebhooks
  const agent = createWebhookAgent({ allowPrivateAddresses, connectTimeoutMs: timeoutMs })
  const deliveries = createWebhookDeliveryRepository(app.database)
  /** Deliveries of real events in flight: in all (MAX_IN_FLIGHT), per site and per account. */
  const inFlightBySite = new InFlight()
  const inFlightByAccount = new InFlight()
  /** Test sends in flight, in slots of their own: in all (MAX_TEST_SENDS) and per account. */
  const testSendsByAccount = new InFlight()
  /** Writes about dropped events, which settle() waits for as for deliveries. */
  const bookkeeping = new Set<Promise<void>>()
  const lastPrunedAt = new Map<string, number>()
  /** Only sites and kinds with drops in their current window: an entry goes once its report is written. */
  const pendingDrops = new Map<string, PendingDrops>()

  /** `work` must not reject. */
  function keepTrackOf(work: Promise<void>): void {
    bookkeeping.add(work)
    void work.finally(() => bookkeeping.delete(work))
  }

  /** The secret to sign with, and the one it replaced while their overlap lasts. */
  async function openSecret(site: Site): Promise<{ secret: string; previousSecret?: string } | DeliveryResult> {
    const secret = openWebhookSecret(app, site)
    if (secret === null) {
      return { outcome: 'refused', statusCode: null, latencyMs: 0, error: 'the site has no webhook secret; unsigned webhooks are never sent' }
    }
    if (secret === undefined) {
      // As with a missing secret, nothing was sent and no receiver is at fault: refused, not failed.
      return { outcome: 'refused', statusCode: null, latencyMs: 0, error: 'the webhook secret cannot be decrypted (was TOLLGATE_SECRET changed?); set it again' }
    }
    const previous = livePreviousWebhookSecret(site, Date.now())
    if (previous === null) return { secret }
    const previousSecret = openWebhookSecret(app, { id: site.id, webhookSecretCiphertext: previous.ciphertext })
    if (typeof previousSecret !== 'string') {
      // The overlap is a courtesy to receivers not yet moved: the current secret still signs.
      app.log.warn({ siteId: site.id }, 'the replaced webhook secret cannot be decrypted; signing with the current one alone')
      return { secret }
    }
    return { secret, previousSecret }
  }

  /**
   * One delivery: the signed POST and its outcome (counted and logged); resolves with the record
   * and, apart, with its writing to the delivery log, and never rejects. A slot of the caps is held
   * for the POST alone: writing the record and pruning the log happen beside it (settle() waits for
   * them), so a fast receiver is not capped by the database's pace.
   */
  async function deliver(
    site: Site,
    url: string,
    payloadFor: (eventId: string) => WebhookPayload,
    redeliveryOf: string | null = null,
  ): Promise<{ delivery: WebhookDelivery; recorded: Promise<void> }> {
    const deliveryId = randomUUID()
    // A resend carries its event's first id (body, X-Service-Delivery, webhook-id); its row has its own.
    const eventId = redeliveryOf ?? deliveryId
    const payload = payloadFor(eventId)
    const createdAt = new Date()
    const opened = await openSecret(site)
    const result = 'secret' in opened
      ? await sendWebhook({ url, secret: opened.secret, previousSecret: opened.previousSecret, payload, deliveryId: eventId }, { dispatcher: agent, timeoutMs, allowPrivateAddresses })
      : opened
    const delivery: WebhookDelivery = {
      id: deliveryId,
      siteId: site.id,
      event: payload.event,
      url,
      isTest: payload.test === true,
      verificationId: verificationIdOf(payload),
      redeliveryOf,
      createdAt,
      ...result,
    }
    // Test sends are answered to their operator and listed in the delivery log, not counted: a few
    // sent to a receiver being set up would otherwise fire TollgateWebhookDeliveriesFailing.
    if (!delivery.isTest) app.counters.increment('webhookDeliveries', { outcome: result.outcome })
    const context = { siteId: site.id, deliveryId, ...(redeliveryOf === null ? {} : { redeliveryOf }), outcome: result.outcome, statusCode: result.statusCode, latencyMs: result.latencyMs }
    if (result.outcome === 'delivered') app.log.debug(context, 'webhook delivered')
    else app.log.warn({ ...context, error: result.error }, 'webhook delivery failed')
    const recorded = (async () => {
      await deliveries.record(delivery).catch((error: unknown) => {
        app.log.warn({ err: error, siteId: site.id, deliveryId }, 'could not record a webhook delivery')
      })
      await pruneNowAndThen(site.id)
    })()
    keepTrackOf(recorded)
    return { delivery, recorded }
  }

  async function pruneNowAndThen(siteId: string): Promise<void> {
    const now = Date.now()
    if (now - (lastPrunedAt.get(siteId) ?? 0) < PRUNE_INTERVAL_MS) return
    lastPrunedAt.set(siteId, now)
    if (lastPrunedAt.size > 10_000) lastPrunedAt.clear()
    await deliveries.prune(siteId).catch((error: unknown) => app.log.warn({ err: error, siteId }, 'could not prune webhook deliveries'))
  }

  /**
   * Counts a dropped event at once (metrics); the site's first drop opens a window, and when it
   * ends (a minute later, or at settle and shutdown) one entry in the log and in the site's own
   * delivery log, where its operator looks, says how many were dropped in it and why.
   */
  function noteDropped(event: Pick<SiteEvent, 'siteId' | 'kind'>, limit: string): void {
    app.counters.increment('webhookDeliveries', { outcome: 'dropped' })
    const { siteId, kind } = event
    const key = `${kind} ${siteId}`
    let pending = pendingDrops.get(key)
    if (pending === undefined) {
      if (pendingDrops.size >= MAX_PENDING_DROP_REPORTS) {
        const oldest = pendingDrops.keys().next().value
        if (oldest !== undefined) reportDrops(oldest)
      }
      const timer = setTimeout(() => reportDrops(key), DROP_REPORT_WINDOW_MS)
      // A pending report never keeps the process alive; shutdown writes it (settle).
      timer.unref()
      pending = { siteId, kind, count: 0, limits: new Map(), since: new Date(), timer }
      pendingDrops.set(key, pending)
    }
    pending.count += 1
    pending.limits.set(limit, (pending.limits.get(limit) ?? 0) + 1)
  }

  function reportDrops(key: string): void {
    const pending = pendingDrops.get(key)
    if (pending === undefined) return
    pendingDrops.delete(key)
    clearTimeout(pending.timer)
    const { siteId, kind } = pending
    // One limit: the count is the entry's; several: how many each dropped.
    const limits = pending.limits.size === 1 ? [...pending.limits.keys()].join('') : [...pending.limits].map(([limit, count]) => `${limit}: ${count}`).join('; ')
    const droppedBy = Object.fromEntries(pending.limits)
    app.log.warn({ siteId, event: kind, dropped: pending.count, since: pending.since, limit: limits, droppedBy }, 'webhook events dropped')
    keepTrackOf(recordDropped(pending, new Date(), `${pending.count} event(s) dropped since ${pending.since.toISOString()} (${limits})`))
  }

  async function recordDropped({ siteId, kind }: PendingDrops, createdAt: Date, error: string): Promise<void> {
    try {
      const site = await app.siteCache.findById(siteId)
      const url = site?.settings.webhookUrl
      if (site === undefined || url === null || url === undefined || !wants(site, kind)) return
      await deliveries.record({ id: randomUUID(), siteId, event: kind, url, isTest: false, verificationId: null, redeliveryOf: null, createdAt, outcome: 'dropped', statusCode: null, latencyMs: 0, error })
    } catch (failure) {
      app.log.warn({ err: failure, siteId }, 'could not record dropped webhook events')
    }
  }

  /**
   * An event that waited for a slot is sent with its site as it is when its delivery starts, not
   * as it was when the event was made: a secret replaced, a webhook removed, paused or moved
   * meanwhile applies to it as to a new event. The site cache answers from memory, and every change
   * to a site drops its copy on every instance before the change is answered (plugins/sites.ts).
   */
  async function dispatch(event: SiteEvent, waited: boolean): Promise<void> {
    const site = (waited ? undefined : event.site) ?? (await app.siteCache.findById(event.siteId))
    if (site === undefined || !wants(site, event.kind)) {
      if (waited) dropUnwanted(event, site)
      return
    }
    const url = site.settings.webhookUrl
    if (url === null) return
    const account = shareOf(site)
    if (!isAlert(event) && inFlightByAccount.of(account) >= MAX_IN_FLIGHT_PER_ACCOUNT) {
      noteDropped(event, `${MAX_IN_FLIGHT_PER_ACCOUNT} deliveries in flight for the sites of this account`)
      return
    }
    await inFlightByAccount.hold(account, deliver(site, url, event.payloadFor))
  }

  /**
   * A waiting event whose site no longer wants it (its webhook removed or paused, the kind turned
   * off, the site deleted) is not sent, nor are the events behind it that the site no longer wants
   * either: one line in the log says how many. Not counted as dropped: no limit of Tollgate's
   * stopped them, and the delivery alert must not fire for an operator's own change.
   */
  function dropUnwanted(event: SiteEvent, site: Site | undefined): void {
    const line = waiting.get(event.siteId) ?? []
    const kept = site === undefined ? [] : line.filter((waitingEvent) => wants(site, waitingEvent.kind))
    const droppedBehind = line.length - kept.length
    const notSent = 1 + droppedBehind
    waitingCount -= droppedBehind
    if (kept.length === 0) waiting.delete(event.siteId)
    else waiting.set(event.siteId, kept)
    const reason =
      site === undefined ? 'the site was deleted'
        : site.settings.webhookUrl === null ? 'the webhook was removed'
          : `the webhook no longer wants ${event.kind}`
    app.log.info({ siteId: event.siteId, event: event.kind, notSent, reason }, 'webhook events not sent: the webhook changed while they waited for a slot')
  }

  /** Events waiting for a slot, in a line per site (sites in the order their lines began). */
  const waiting = new Map<string, SiteEvent[]>()
  let waitingCount = 0
  /**
   * Set when shutdown begins: what waits then is dropped, so shutdown waits for no more than the
   * deliveries in flight; alerts excepted (below).
   */
  let closing = false

  function start(event: SiteEvent, waited: boolean): void {
    inFlightBySite
      .hold(event.siteId, dispatch(event, waited))
      .catch((error: unknown) => {
        app.log.error({ err: error, siteId: event.siteId, event: event.kind }, 'webhook dispatch failed')
        noteDropped(event, 'the site could not be read')
      })
      .finally(startWaiting)
  }

  /** Starts waiting events, each site's in order, while slots are free (sites take turns). */
  function startWaiting(): void {
    let started = true
    while (started && waitingCount > 0 && inFlightBySite.size < MAX_IN_FLIGHT) {
      started = false
      for (const [siteId, line] of waiting) {
        if (inFlightBySite.size >= MAX_IN_FLIGHT) break
        if (inFlightBySite.of(siteId) >= MAX_IN_FLIGHT_PER_SITE) continue
        const event = line.shift()
        if (event === undefined) continue
        waitingCount -= 1
        if (line.length === 0) waiting.delete(siteId)
        start(event, true)
        started = true
      }
    }
  }

  /** Drops what waits, but for alerts (at most two per surge; the fleet's other instances would not tell them). */
  function dropWaiting(reason: string): void {
    for (const [siteId, line] of waiting) {
      const alerts = line.filter(isAlert)
      for (const event of line) if (!isAlert(event)) noteDropped(event, reason)
      waitingCount -= line.length - alerts.length
      if (alerts.length === 0) waiting.delete(siteId)
      else waiting.set(siteId, alerts)
    }
  }

  /** Sends the event now, or lines it up for a slot, or drops it (counted and reported). */
  function enqueue(event: SiteEvent): void {
    // A site at hand that wants no such event costs nothing more (test site keys hand none).
    if (event.site !== undefined && !wants(event.site, event.kind)) return
    // An alert decided as shutdown began is still sent: the surge's record says it was told, so no
    // other instance will tell it (shutdown waits for its delivery, bounded by the timeout).
    if (closing && !isAlert(event)) {
      noteDropped(event, 'Tollgate was shutting down')
      return
    }
    const line = waiting.get(event.siteId)
    const hasSlot = inFlightBySite.of(event.siteId) < MAX_IN_FLIGHT_PER_SITE && inFlightBySite.size < MAX_IN_FLIGHT
    // An event never overtakes its site's line, unless it is an alert: those go first.
    if (line === undefined && hasSlot) {
      start(event, false)
      return
    }
    const siteFull = inFlightBySite.of(event.siteId) >= MAX_IN_FLIGHT_PER_SITE
    const cause = siteFull ? `${MAX_IN_FLIGHT_PER_SITE} deliveries in flight for this site` : `${MAX_IN_FLIGHT} deliveries in flight on this instance`
    if (isAlert(event)) {
      // After the alerts already waiting, ahead of everything else.
      const lineOf = line ?? []
      const firstOther = lineOf.findIndex((waitingEvent) => !isAlert(waitingEvent))
      lineOf.splice(firstOther < 0 ? lineOf.length : firstOther, 0, event)
      if (line === undefined) waiting.set(event.siteId, lineOf)
      waitingCount += 1
    } else if ((line?.length ?? 0) >= MAX_WAITING_PER_SITE) {
      noteDropped(event, `${MAX_WAITING_PER_SITE} events waiting behind ${cause}`)
    } else if (waitingCount >= MAX_WAITING) {
      noteDropped(event, `${MAX_WAITING} events waiting on this instance`)
    } else {
      if (line === undefined) waiting.set(event.siteId, [event])
      else line.push(event)
      waitingCount += 1
    }
  }

  // The listeners return at once: the emitter (a verification request, the surge meter) never
  // waits for a delivery, and nothing a delivery does can throw back into it.
  app.events.on(VERIFICATION_BLOCKED, (blocked) => {
    enqueue({ kind: VERIFICATION_BLOCKED, siteId: blocked.siteId, site: blocked.site, payloadFor: (deliveryId) => buildBlockedPayload(blocked, deliveryId) })
  })
  // An alert comes with no site: it is read first, so that one whose webhook does not want it
  // costs nothing more (nor is counted as dropped at shutdown).
  for (const kind of [SURGE_STARTED, SURGE_ENDED] as const) {
    app.events.on(kind, (alert) => {
      const event = { kind, siteId: alert.siteId, payloadFor: (deliveryId: string) => buildSurgePayload(alert, deliveryId) }
      keepTrackOf(
        app.siteCache.findById(alert.siteId).then(
          (site) => {
            if (site !== undefined) enqueue({ ...event, site })
          },
          (error: unknown) => {
            app.log.error({ err: error, siteId: alert.siteId, event: kind }, 'webhook dispatch failed')
            noteDropped(event, 'the site could not be read')
          },
        ),
      )
    })
  }

  /**
   * Runs an operator's send (a test send, a resend) in the slots of their own, or throws 429 at
   * once while they are taken; resolves once its delivery is recorded.
   */
  function inOperatorSlot(site: Site, admit: (() => Promise<void>) | undefined, send: (url: string) => ReturnType<typeof deliver>): Promise<WebhookDelivery> {
    const url = site.settings.webhookUrl
    if (url === null) throw new Error('an operator send needs a site with a webhook URL')
    const account = shareOf(site)
    const full =
      testSendsByAccount.of(account) >= MAX_TEST_SENDS_PER_ACCOUNT
        ? `${MAX_TEST_SENDS_PER_ACCOUNT} are in flight for the sites of this account`
        : testSendsByAccount.size >= MAX_TEST_SENDS
          ? `${MAX_TEST_SENDS} are in flight on this instance`
          : undefined
    if (full !== undefined) {
      // A slot frees when a send ends, which is within the delivery timeout.
      throw new ApiError('rate_limited', `Too many test sends and resends at once: ${full}. Retry when one has ended.`, undefined, {
        'retry-after': String(Math.ceil(timeoutMs / 1000)),
      })
    }
    // The slot is taken before `admit` runs, so a send refused for full slots uses none of the
    // caller's budget, and one refused by `admit` gives its slot back.
    return testSendsByAccount.hold(account, (async () => {
      await admit?.()
      const { delivery, recorded } = await send(url)
      // The operator reads the delivery log right after: the record is there by then.
      await recorded
      return delivery
    })())
  }

  function sendTest(site: Site, admit?: () => Promise<void>, event: WebhookEvent = VERIFICATION_BLOCKED): Promise<WebhookDelivery> {
    return inOperatorSlot(site, admit, (url) => deliver(site, url, (deliveryId) => buildTestPayload(site.id, new Date(), deliveryId, event)))
  }

  const verificationQueries = createVerificationQueryRepository(app.database)

  async function redeliver(site: Site, original: WebhookDelivery, admit?: () => Promise<void>): Promise<WebhookDelivery> {
    const { verificationId } = original
    if (original.event !== VERIFICATION_BLOCKED || original.isTest || verificationId === null) {
      throw new ApiError('webhook_event_not_redeliverable', notRedeliverableReason(original))
    }
    const rows = await verificationQueries.listPage(site.id, { limit: 2, verificationId })
    const row = rows.find((entry) => entry.id === verificationId)
    const blocked = row === undefined ? undefined : blockedVerificationOf(row)
    if (blocked === undefined) throw new ApiError('webhook_event_expired')
    return inOperatorSlot(site, admit, (url) => deliver(site, url, (eventId) => buildRedeliveredPayload(blocked, eventId, new Date()), original.redeliveryOf ?? original.id))
  }

  async function settle(): Promise<void> {
    for (;;) {
      startWaiting()
      for (const key of [...pendingDrops.keys()]) reportDrops(key)
      if (inFlightBySite.size + testSendsByAccount.size + bookkeeping.size + waitingCount === 0) return
      await Promise.allSettled([...inFlightBySite.current(), ...testSendsByAccount.current(), ...bookkeeping])
    }
  }

  app.decorate('webhooks', { sendTest, redeliver, deliveries, settle } satisfies WebhookService)

  // As shutdown begins, before the server waits for the requests in flight: a slow one (a test
  // send, a long query) would otherwise let the waiting events start as slots free, and shutdown
  // would wait for a second round of deliveries.
  app.addHook('preClose', async () => {
    closing = true
    dropWaiting('waiting when Tollgate shut down')
  })
  // Runs before the database and the counters close (hooks run in reverse order of
  // registration); every delivery is bounded by its timeout, so this wait is too.
  app.addHook('onClose', async () => {
    closing = true
    dropWaiting('waiting when Tollgate shut down')
    await settle()
    await agent.close()
  })
}

export default fp(webhooksPlugin, { name: 'webhooks', dependencies: ['storage', 'metrics', 'events', 'sites'] })
