import type { DeliveryOutcome, WebhookDelivery, WebhookEvent } from '../api/types.js'

export const outcomeLabels: Record<DeliveryOutcome, string> = {
  delivered: 'Delivered',
  failed: 'Failed',
  timeout: 'Timed out',
  refused: 'Not sent',
  dropped: 'Dropped',
}

/** The events a webhook can be sent, in the API's order, as the dashboard names them. */
export const webhookEventChoices: { event: WebhookEvent; label: string }[] = [
  { event: 'verification.blocked', label: 'a verification was blocked' },
  { event: 'surge.started', label: "the site's challenges per minute reached its surge threshold (Settings)" },
  { event: 'surge.ended', label: 'the surge is over (3 minutes below the threshold)' },
]

/**
 * Whether the dashboard offers to resend a delivery: a real block's event the receiver may have
 * missed (failed or timed out). The API resends any real block's; surges, tests and drops are not kept.
 */
export function canResend(delivery: WebhookDelivery): boolean {
  return !delivery.test && delivery.event === 'verification.blocked' && delivery.verificationId !== null && (delivery.outcome === 'failed' || delivery.outcome === 'timeout')
}
