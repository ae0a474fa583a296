import { abortedError, codeFromServer, TollgateError } from './errors.js'
import type { BehaviorData } from './signals/behavior.js'
import type { Fingerprint } from './signals/fingerprint.js'
import { isChallengeText } from './solver/challenge-format.js'
import type { TollgateAction } from './types.js'

/** The Challenge object of DESIGN section 4. */
export interface Challenge {
  challengeId: string
  challenge: string
  difficulty: number
  expiresAt: string
  /**
   * How long it had left when the service answered, by the service's own clock (its Date header,
   * to the second): unlike expiresAt, it does not depend on this device's clock being right.
   */
  remainingMs?: number
}

export interface Submission {
  challengeId: string
  nonce: string
  solveTimeMs: number
  fingerprint: Fingerprint
  behaviorData: BehaviorData
  /** Sent only when given (JSON leaves undefined out). */
  pageAction: string | undefined
  cData: string | undefined
}

export interface Verdict {
  success: boolean
  token: string | undefined
  riskScore: number
  action: TollgateAction
  expiresAt: string | undefined
  /** The answer's X-Request-Id: the id of the verification's row in the site's log. */
  requestId: string | undefined
}

const REQUEST_TIMEOUT_MS = 15_000

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null
}

/** Aborts when the caller aborts or after REQUEST_TIMEOUT_MS, whichever comes first. */
function requestSignal(signal: AbortSignal | undefined): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS)
  const onAbort = () => controller.abort()
  signal?.addEventListener('abort', onAbort, { once: true })
  return {
    signal: controller.signal,
    done: () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    },
  }
}

interface Answer {
  body: Record<string, unknown>
  /** The service's clock when it answered (its Date header), or NaN. */
  serverTime: number
  /** Its X-Request-Id, when it sent one. */
  requestId: string | undefined
}

/**
 * What may pass a moment later: no connection at all (a blip of the network or a restart behind a
 * load balancer), or a 502-504 from the service or its gateway. Not a request that ran out of its
 * 15 s, unless `retryTimeout` allows it (an early solve, which nobody waits for yet): the visitor would
 * wait as long again.
 */
function isTransient(error: unknown, elapsedMs: number, retryTimeout: boolean): boolean {
  if (!(error instanceof TollgateError)) return false
  return error.code === 'network_error' ? retryTimeout || elapsedMs < REQUEST_TIMEOUT_MS : error.status !== undefined && error.status > 501 && error.status < 505
}

/** Waits 1-2 s (spread, so that the pages an outage failed do not all come back at once), or rejects with aborted. */
function pause(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, 1_000 + Math.random() * 1_000)
    function done(): void {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      if (signal?.aborted === true) reject(abortedError())
      else resolve()
    }
    signal?.addEventListener('abort', done)
  })
}

/** One request, tried a second time after a pause when its failure is transient (a time-out too with `retryTimeout`). */
async function call(apiUrl: string, path: string, siteKey: string, body: unknown, signal: AbortSignal | undefined, retryTimeout = false): Promise<Answer> {
  const started = Date.now()
  try {
    return await callOnce(apiUrl, path, siteKey, body, signal)
  } catch (error) {
    if (!isTransient(error, Date.now() - started, retryTimeout)) throw error
    await pause(signal)
    return callOnce(apiUrl, path, siteKey, body, signal)
  }
}

async function callOnce(apiUrl: string, path: string, siteKey: string, body: unknown, signal: AbortSignal | undefined): Promise<Answer> {
  // The caller's signal and the time limit cover the whole exchange, the body's download included:
  // a service that sends its headers and then stalls must not hold the visitor for ever.
  // An abort that came before this request (an AbortSignal.abort() passed in, or reset() while
  // the flow awaited the fingerprint) fires no 'abort' event any more: nothing may leave then.
  if (signal?.aborted === true) throw abortedError()
  const request = requestSignal(signal)
  const failure = (): TollgateError => signal?.aborted === true
    ? abortedError()
    : new TollgateError('network_error', `${apiUrl} could not be reached.`)
  let response: Response
  let payload: unknown
  try {
    try {
      response = await fetch(`${apiUrl}${path}`, {
        method: 'POST',
        mode: 'cors',
        credentials: 'omit',
        headers: body === undefined ? { 'X-Site-Key': siteKey } : { 'X-Site-Key': siteKey, 'Content-Type': 'application/json' },
        body: body === undefined ? null : JSON.stringify(body),
        signal: request.signal,
      })
    } catch {
      throw failure()
    }
    try {
      payload = await response.json()
    } catch {
      if (request.signal.aborted) throw failure()
      payload = undefined
    }
  } finally {
    request.done()
  }
  if (response.ok && isRecord(payload)) {
    return { body: payload, serverTime: Date.parse(response.headers.get('date') ?? ''), requestId: response.headers.get('x-request-id') ?? undefined }
  }
  const error = isRecord(payload) && isRecord(payload.error) ? payload.error : {}
  const retryAfterText = response.headers.get('retry-after')
  const retryAfter = retryAfterText === null ? Number.NaN : Number(retryAfterText)
  throw new TollgateError(
    response.ok ? 'invalid_response' : codeFromServer(error.code, response.status),
    typeof error.message === 'string' ? error.message : `${apiUrl}${path} answered ${response.status}.`,
    {
      status: response.status,
      requestId: typeof error.requestId === 'string' ? error.requestId : undefined,
      retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined,
    },
  )
}

function invalid(what: string): TollgateError {
  return new TollgateError('invalid_response', `The service sent ${what}.`)
}

/** `retryTimeout`: a request that ran out of its 15 s is sent once more too (the early solve, which nobody waits for yet). */
export async function requestChallenge(apiUrl: string, siteKey: string, signal?: AbortSignal, retryTimeout?: boolean): Promise<Challenge> {
  const { body, serverTime } = await call(apiUrl, '/api/v1/challenge', siteKey, undefined, signal, retryTimeout)
  const { challengeId, challenge, difficulty, algorithm, expiresAt } = body
  if (typeof challengeId !== 'string' || typeof challenge !== 'string' || !isChallengeText(challenge)) throw invalid('a malformed challenge')
  if (typeof difficulty !== 'number' || !Number.isInteger(difficulty) || difficulty < 0 || difficulty > 64) throw invalid('an unusable difficulty')
  if (algorithm !== 'SHA-256') throw invalid('an unsupported algorithm')
  const expiry = typeof expiresAt === 'string' ? expiresAt : ''
  // Date has whole seconds: the challenge may have had up to a second less.
  const remainingMs = Date.parse(expiry) - serverTime - 1_000
  return { challengeId, challenge, difficulty, expiresAt: expiry, ...(Number.isFinite(remainingMs) ? { remainingMs } : {}) }
}

export async function submitSolution(apiUrl: string, siteKey: string, submission: Submission, signal?: AbortSignal): Promise<Verdict> {
  const { body, requestId } = await call(apiUrl, '/api/v1/verify', siteKey, submission, signal)
  const { success, token, riskScore, action, expiresAt } = body
  if (typeof success !== 'boolean' || typeof riskScore !== 'number') throw invalid('a malformed verification result')
  if (action !== 'allow' && action !== 'challenge' && action !== 'block') throw invalid('an unknown action')
  return {
    success,
    token: typeof token === 'string' && token !== '' ? token : undefined,
    riskScore,
    action,
    expiresAt: typeof expiresAt === 'string' ? expiresAt : undefined,
    requestId,
  }
}
