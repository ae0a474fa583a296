import type { SurgeAlert } from '../challenge/site-surge.js'

/** The spec's event kind: a verification was blocked. */
export const VERIFICATION_BLOCKED = 'verification.blocked'
/** A site's challenge rate reached its surge threshold (docs/webhooks.md, "Surge events"). */
export const SURGE_STARTED = 'surge.started'
/** The surge is over: the rate stayed below the threshold for SURGE_QUIET_MS. */
export const SURGE_ENDED = 'surge.ended'

/** Every event kind a site's webhook can be sent, in the order the dashboard lists them. */
export const WEBHOOK_EVENTS = [VERIFICATION_BLOCKED, SURGE_STARTED, SURGE_ENDED] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]
/** What a site's webhook is sent unless its settings say otherwise: the spec's one event. */
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookEvent[] = [VERIFICATION_BLOCKED]

export function isWebhookEvent(name: string): name is WebhookEvent {
  return (WEBHOOK_EVENTS as readonly string[]).includes(name)
}

/** A blocked verification, as the verify route tells it and its webhook carries it. */
export interface BlockedVerification {
  siteId: string
  timestamp: Date
  riskScore: number
  anomalies: string[]
  /** Two-letter country code, or 'XX' when unknown. */
  countryCode: string
  /**
   * Beyond the spec, what finds the block again: the verify request's id (its row in the
   * verification log; its first 13 characters are the reference the turned-away visitor was
   * shown), the device's ephemeral id on the site (when the submission described one), and the
   * page's host (from Origin or Referer) and action (the SDK's), which tell which form was attacked.
   */
  verificationId: string
  device: string | null
  hostname: string | null
  pageAction: string | null
}

interface PayloadFrame {
  id: string
  siteId: string
  timestamp: string
  test?: true
  /** Only on an event its operator sent again: when (docs/webhooks.md, "Redelivery"). */
  redeliveredAt?: string
}

/**
 * The spec's webhook payload, field for field, with the delivery's `id` (the X-Service-Delivery and
 * webhook-id headers' value) inside the signed body: two events of one site in the same millisecond
 * can otherwise be the same bytes, and a receiver could not tell a replay from the second event.
 * `test` appears only on test sends.
 */
export interface BlockedPayload extends PayloadFrame {
  event: typeof VERIFICATION_BLOCKED
  data: Omit<BlockedVerification, 'siteId' | 'timestamp'>
}

/** Tollgate's own events, in the same frame: a surge of the site's challenges began or ended. */
export interface SurgePayload extends PayloadFrame {
  event: typeof SURGE_STARTED | typeof SURGE_ENDED
  data: { startedAt: string; challengesPerMinute: number; threshold: number }
}

export type WebhookPayload = BlockedPayload | SurgePayload

export function buildBlockedPayload(blocked: BlockedVerification, deliveryId: string): BlockedPayload {
  return {
    id: deliveryId,
    event: VERIFICATION_BLOCKED,
    siteId: blocked.siteId,
    timestamp: blocked.timestamp.toISOString(),
    data: {
      riskScore: blocked.riskScore,
      anomalies: [...blocked.anomalies],
      countryCode: blocked.countryCode,
      verificationId: blocked.verificationId,
      device: blocked.device,
      hostname: blocked.hostname,
      pageAction: blocked.pageAction,
    },
  }
}

export function buildSurgePayload(alert: SurgeAlert, deliveryId: string): SurgePayload {
  return {
    id: deliveryId,
    event: alert.kind === 'started' ? SURGE_STARTED : SURGE_ENDED,
    siteId: alert.siteId,
    timestamp: alert.at.toISOString(),
    data: { startedAt: alert.startedAt.toISOString(), challengesPerMinute: alert.challengesPerMinute, threshold: alert.threshold },
  }
}

/**
 * A blocked verification's event sent again by its operator (POST .../redeliver): the payload
 * its first delivery carried, rebuilt by the same builder from the verification's row, under the
 * same `id` (so a receiver that got the first one takes this one as a duplicate: 2xx, not acted on again), with
 * `redeliveredAt`, the time of this sending, under the signature: `timestamp` still tells when the
 * verification was blocked, and a receiver that refuses old events judges a resend's age by it.
 */
export function buildRedeliveredPayload(blocked: BlockedVerification, eventId: string, now: Date): BlockedPayload {
  return { ...buildBlockedPayload(blocked, eventId), redeliveredAt: now.toISOString() }
}

/**
 * A test send is a real payload of the event kind asked for, marked `"test": true`: receivers
 * exercise the very code path (parsing, both signatures, the event switch) they run in
 * production, and can still skip side effects. A separate event kind would only prove that the
 * URL answers.
 */
export function buildTestPayload(siteId: string, now: Date, deliveryId: string, event: WebhookEvent = VERIFICATION_BLOCKED): WebhookPayload {
  if (event === VERIFICATION_BLOCKED) {
    return {
      ...buildBlockedPayload(
        {
          siteId,
          timestamp: now,
          riskScore: 100,
          anomalies: ['webdriver_detected', 'datacenter_ip'],
          countryCode: 'XX',
          // A sample's own id, in the shape of a real one: a receiver's parsing of it is exercised.
          verificationId: deliveryId,
          device: null,
          hostname: 'www.example.com',
          pageAction: 'login',
        },
        deliveryId,
      ),
      test: true,
    }
  }
  // A sample surge: twice a threshold of 600, begun five minutes before (ended: a minute later, the rate under it).
  const isStart = event === SURGE_STARTED
  const startedAt = new Date(now.getTime() - (isStart ? 0 : 5 * 60_000))
  const alert: SurgeAlert = { kind: isStart ? 'started' : 'ended', siteId, at: now, startedAt, challengesPerMinute: isStart ? 1_200 : 150, threshold: 600 }
  return { ...buildSurgePayload(alert, deliveryId), test: true }
}

/** The verification a payload tells of: a real block's; null for surge events and test sends (a sample's names none). */
export function verificationIdOf(payload: WebhookPayload): string | null {
  return payload.event === VERIFICATION_BLOCKED && payload.test !== true ? payload.data.verificationId : null
}

/** The exact bytes sent and signed; signatures are computed over these, never re-serialised. */
export function serializePayload(payload: WebhookPayload): Buffer {
  return Buffer.from(JSON.stringify(payload), 'utf8')
}
