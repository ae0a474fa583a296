/**
 * How one delivery ended:
 * - delivered: the receiver answered 2xx;
 * - failed: it answered something else, or the connection failed (refused, reset, TLS error);
 * - timeout: no complete answer within the delivery timeout (10 s);
 * - refused: Tollgate would not send it (the URL or the address it resolves to is not allowed,
 *   or the site has no usable secret: none set, or one that cannot be decrypted);
 * - dropped: events not sent because too many deliveries were in flight (for the site, its
 *   account, or the instance); one row per site and minute says how many.
 */
export type DeliveryOutcome = 'delivered' | 'failed' | 'timeout' | 'refused' | 'dropped'

export const deliveryOutcomes: readonly DeliveryOutcome[] = ['delivered', 'failed', 'timeout', 'refused', 'dropped']

export interface DeliveryResult {
  outcome: DeliveryOutcome
  /** The receiver's HTTP status, or null when no answer arrived. */
  statusCode: number | null
  latencyMs: number
  /** A short, secret-free reason for anything but delivered. */
  error: string | null
}

/** Only 2xx counts: redirects are not followed (they could lead anywhere) and count as failed. */
export function judgeStatusCode(statusCode: number): Pick<DeliveryResult, 'outcome' | 'error'> {
  if (statusCode >= 200 && statusCode < 300) return { outcome: 'delivered', error: null }
  return { outcome: 'failed', error: `the receiver answered HTTP ${statusCode}` }
}
