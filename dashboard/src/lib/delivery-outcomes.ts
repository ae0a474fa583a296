import type { DeliveryOutcome } from '../api/types.js'

export const outcomeLabels: Record<DeliveryOutcome, string> = {
  delivered: 'Delivered',
  failed: 'Failed',
  timeout: 'Timed out',
  refused: 'Not sent',
  dropped: 'Dropped',
}
