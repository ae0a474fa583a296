import type { DeliveryOutcome, WebhookEvent } from '../api/types.js'

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
