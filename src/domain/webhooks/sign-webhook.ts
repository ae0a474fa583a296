import { createHmac } from 'node:crypto'

/**
 * Both signature schemes of an outgoing webhook, keyed with the site's webhookSecret.
 *
 * 1. The spec's `X-Service-Signature: sha256=<hex>`: HMAC-SHA256 of the exact body bytes, keyed
 *    with the UTF-8 bytes of the secret (what GitHub-style verifiers, e.g. @octokit/webhooks-methods,
 *    do with a string secret).
 * 2. Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`):
 *    HMAC-SHA256 of `${id}.${timestamp}.${body}`. That scheme's secrets are base64 key bytes,
 *    optionally prefixed `whsec_`, so the key is derived by deriveStandardWebhooksKey below.
 */

const STANDARD_SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/

/**
 * The Standard Webhooks key for a webhookSecret:
 * - a secret already in that scheme's form, `whsec_<canonical base64>`, means its decoded bytes,
 *   so a receiver passes the secret unchanged to `new Webhook(secret)`;
 * - any other secret means its UTF-8 bytes, the same key as X-Service-Signature, so a receiver
 *   passes `Buffer.from(secret).toString('base64')` (see toStandardWebhooksSecret).
 */
export function deriveStandardWebhooksKey(secret: string): Buffer {
  const encoded = STANDARD_SECRET.exec(secret)?.[1]
  if (encoded !== undefined && encoded.length % 4 === 0) {
    const key = Buffer.from(encoded, 'base64')
    // Only a canonical encoding counts: lenient decoders must not give a receiver other bytes.
    if (key.length > 0 && key.toString('base64') === encoded) return key
  }
  return Buffer.from(secret, 'utf8')
}

/** The secret as a Standard Webhooks library expects it: `whsec_` + base64 of the key. */
export function toStandardWebhooksSecret(secret: string): string {
  return `whsec_${deriveStandardWebhooksKey(secret).toString('base64')}`
}

/** `sha256=` + lowercase hex HMAC-SHA256 of the body bytes (the spec's X-Service-Signature). */
export function signServiceSignature(secret: string, body: Buffer): string {
  return `sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`
}

/** `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}` (the Standard Webhooks signature). */
export function signStandardWebhook(secret: string, id: string, timestampSeconds: number, body: Buffer): string {
  const hmac = createHmac('sha256', deriveStandardWebhooksKey(secret))
  hmac.update(`${id}.${timestampSeconds}.`, 'utf8')
  hmac.update(body)
  return `v1,${hmac.digest('base64')}`
}

export interface SignedHeadersInput {
  secret: string
  /**
   * The secret a replacement replaced, while it still signs (an overlap): webhook-signature
   * carries its signature after the current one's, space-separated as Standard Webhooks allows,
   * so that a receiver not yet moved to the new secret keeps verifying. X-Service-Signature (the
   * spec's, one value) is the current secret's alone.
   */
  previousSecret?: string
  event: string
  deliveryId: string
  body: Buffer
  sentAt: Date
}

/**
 * Every header of a webhook request, spelled as each scheme spells them (HTTP header names are
 * case-insensitive). The delivery id doubles as the Standard Webhooks message id.
 */
export function buildSignedHeaders(input: SignedHeadersInput): Record<string, string> {
  const timestampSeconds = Math.floor(input.sentAt.getTime() / 1000)
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'Tollgate-Webhooks/1',
    'X-Service-Event': input.event,
    'X-Service-Delivery': input.deliveryId,
    'X-Service-Signature': signServiceSignature(input.secret, input.body),
    'webhook-id': input.deliveryId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': [input.secret, ...(input.previousSecret === undefined ? [] : [input.previousSecret])]
      .map((secret) => signStandardWebhook(secret, input.deliveryId, timestampSeconds, input.body))
      .join(' '),
  }
}
