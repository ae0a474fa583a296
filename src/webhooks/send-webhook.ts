import { errors, request, type Dispatcher } from 'undici'
import { judgeStatusCode, type DeliveryResult } from '../domain/webhooks/delivery-result.js'
import { buildSignedHeaders } from '../domain/webhooks/sign-webhook.js'
import { serializePayload, type WebhookPayload } from '../domain/webhooks/webhook-payload.js'
import { findWebhookUrlProblem } from '../domain/webhooks/webhook-url-policy.js'
import { RefusedAddressError } from './guarded-agent.js'

export interface WebhookMessage {
  url: string
  secret: string
  /** The replaced secret while it still signs beside the current one (buildSignedHeaders). */
  previousSecret?: string
  payload: WebhookPayload
  deliveryId: string
}

export interface SendOptions {
  /** The guarded agent (createWebhookAgent); it enforces the address policy at connect time. */
  dispatcher: Dispatcher
  /** Total time for connecting, sending and receiving the answer's head. */
  timeoutMs: number
  allowPrivateAddresses: boolean
}

/** Receivers are not asked for content; what they send back is read up to this and dropped. */
const MAX_ANSWER_BYTES = 64 * 1024
/** How long the answer's body is read after its status line and headers. */
const ANSWER_DRAIN_MS = 1_000
const MAX_ERROR_LENGTH = 300

class DeliveryTimeoutError extends Error {}

/**
 * POSTs one signed webhook and reports how it went. Never throws: every failure is an outcome
 * (the caller records it), and the whole attempt is bounded by `timeoutMs`.
 */
export async function sendWebhook(message: WebhookMessage, options: SendOptions): Promise<DeliveryResult> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const problem = findWebhookUrlProblem(message.url, { allowPrivateAddresses: options.allowPrivateAddresses })
  if (problem !== undefined) return { outcome: 'refused', statusCode: null, latencyMs: 0, error: problem }

  const body = serializePayload(message.payload)
  const headers = buildSignedHeaders({
    secret: message.secret,
    previousSecret: message.previousSecret,
    event: message.payload.event,
    deliveryId: message.deliveryId,
    body,
    sentAt: new Date(),
  })
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(new DeliveryTimeoutError()), options.timeoutMs)
  const sending = request(message.url, {
    method: 'POST',
    headers,
    body,
    dispatcher: options.dispatcher,
    signal: controller.signal,
  })
  // undici heeds the signal only once a connection is up: an attempt still connecting (a name
  // whose lookup hangs) would run on until the connector's own timeout, which starts later than
  // ours and fires up to half a second late. The race ends the attempt on time; whatever the
  // request comes to afterwards is thrown away.
  const timedOut = new Promise<never>((_resolve, reject) => {
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true })
  })
  timedOut.catch(() => {})
  try {
    const response = await Promise.race([sending, timedOut])
    const latencyMs = elapsed()
    // The status decides. The body is read (so that the connection can serve the next delivery)
    // for at most ANSWER_DRAIN_MS: a receiver that answers its headers first and then keeps its
    // body open for its own work must not hold the delivery's slot until the timeout.
    const drained = AbortSignal.any([controller.signal, AbortSignal.timeout(ANSWER_DRAIN_MS)])
    await response.body.dump({ limit: MAX_ANSWER_BYTES, signal: drained }).catch(() => {})
    return { ...judgeStatusCode(response.statusCode), statusCode: response.statusCode, latencyMs }
  } catch (error) {
    if (controller.signal.aborted || error instanceof errors.ConnectTimeoutError) {
      sending.then((late) => late.body.destroy(), () => {})
      return { outcome: 'timeout', statusCode: null, latencyMs: elapsed(), error: `no answer within ${formatDuration(options.timeoutMs)}` }
    }
    const refused = findRefusedAddressError(error)
    if (refused !== undefined) return { outcome: 'refused', statusCode: null, latencyMs: elapsed(), error: `refused: ${refused.message}` }
    return { outcome: 'failed', statusCode: null, latencyMs: elapsed(), error: describeError(error) }
  } finally {
    clearTimeout(timer)
  }
}

function findRefusedAddressError(error: unknown): RefusedAddressError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof RefusedAddressError) return cause
  }
  return undefined
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return 'the request failed'
  const code = (error as NodeJS.ErrnoException).code
  const text = code !== undefined && !error.message.includes(code) ? `${code}: ${error.message}` : error.message
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text
}

function formatDuration(milliseconds: number): string {
  return milliseconds % 1000 === 0 ? `${milliseconds / 1000} s` : `${milliseconds} ms`
}
