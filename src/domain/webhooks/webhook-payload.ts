/** The only event kind of the spec; test sends reuse it (see buildTestPayload). */
export const VERIFICATION_BLOCKED = 'verification.blocked'

export interface BlockedVerification {
  siteId: string
  timestamp: Date
  riskScore: number
  anomalies: string[]
  countryCode: string
}

/**
 * The spec's webhook payload, field for field, with the delivery's `id` (the X-Service-Delivery and
 * webhook-id headers' value) inside the signed body: two events of one site in the same millisecond
 * can otherwise be the same bytes, and a receiver could not tell a replay from the second event.
 * `test` appears only on test sends.
 */
export interface WebhookPayload {
  id: string
  event: typeof VERIFICATION_BLOCKED
  siteId: string
  timestamp: string
  data: { riskScore: number; anomalies: string[]; countryCode: string }
  test?: true
}

export function buildBlockedPayload(blocked: BlockedVerification, deliveryId: string): WebhookPayload {
  return {
    id: deliveryId,
    event: VERIFICATION_BLOCKED,
    siteId: blocked.siteId,
    timestamp: blocked.timestamp.toISOString(),
    data: { riskScore: blocked.riskScore, anomalies: [...blocked.anomalies], countryCode: blocked.countryCode },
  }
}

/**
 * A test send is a real `verification.blocked` payload marked `"test": true`: receivers exercise
 * the very code path (parsing, both signatures, the event switch) they run in production, and
 * can still skip side effects. A separate event kind would only prove that the URL answers.
 */
export function buildTestPayload(siteId: string, now: Date, deliveryId: string): WebhookPayload {
  return {
    ...buildBlockedPayload({ siteId, timestamp: now, riskScore: 100, anomalies: ['datacenter_ip', 'vpn_detected'], countryCode: 'XX' }, deliveryId),
    test: true,
  }
}

/** The exact bytes sent and signed; signatures are computed over these, never re-serialised. */
export function serializePayload(payload: WebhookPayload): Buffer {
  return Buffer.from(JSON.stringify(payload), 'utf8')
}
