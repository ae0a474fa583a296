import { requestChallenge, submitSolution, type Challenge } from './api-client.js'
import { abortedError, TollgateError } from './errors.js'
import { snapshotBehavior } from './signals/behavior.js'
import { collectFingerprint } from './signals/fingerprint.js'
import { solveOnPage } from './solve-on-page.js'
import { defaultWorkerCount, solveInWorkers } from './solve-in-workers.js'
import type { ExecuteResult, TollgateStatus } from './types.js'

declare const __TOLLGATE_WORKER_FILE__: string
declare const __TOLLGATE_WASM_FILE__: string

/** Set by the build (content-hashed names); the plain names serve unbundled development. */
const WORKER_FILE = typeof __TOLLGATE_WORKER_FILE__ === 'string' ? __TOLLGATE_WORKER_FILE__ : 'tollgate-worker.js'
const WASM_FILE = typeof __TOLLGATE_WASM_FILE__ === 'string' ? __TOLLGATE_WASM_FILE__ : 'tollgate-solver.wasm'

export interface FlowOptions {
  siteKey: string
  apiUrl: string
  assetsUrl: string
  workers: number
  /** Undefined: until the challenge goes stale (see fetchAndSolve). */
  timeoutMs: number | undefined
  maxStepUps: number
  pageAction: string | undefined
  cData: string | undefined
  signal: AbortSignal | undefined
  onStatus: (status: TollgateStatus) => void
  /** Called when the search for an answer begins, after the challenge and the worker's files came (the slow notice counts from it: declarative.ts). */
  onSearch?: () => void
  /** A challenge request that ran out of time is sent once more (the early solve, which nobody waits for yet). */
  retryTimeout?: boolean
}

/** A solved challenge that has not been submitted yet. */
export interface Solved {
  challenge: Challenge
  nonce: string
  solveTimeMs: number
  /** Local time after which the challenge is considered stale. */
  staleAt: number
}

const FALLBACK_LIFETIME_MS = 60_000
/**
 * The start of the verify request's id that a turned-away visitor is shown as the reference,
 * `1a2b3c4d-5e6f`; none when a proxy on the way put an id of its own in the header.
 */
const REFERENCE = /^[\da-f]{8}-[\da-f]{4}/
const SAFETY_MARGIN_MS = 10_000

/**
 * When to stop trusting a challenge, on this device's clock: its remaining life by the service's
 * clock when there is one (this device's may be minutes off), else by expiresAt against ours when
 * that looks plausible, else a conservative minute; less a margin for the submission's trip (a
 * quarter of the life, at most 10 s). A challenge with less than that left is stale at once.
 */
function staleTimeOf(challenge: Challenge, receivedAt: number): number {
  const byOurClock = Date.parse(challenge.expiresAt) - Date.now()
  const remaining = challenge.remainingMs
    ?? (Number.isFinite(byOurClock) && byOurClock < 3_600_000 ? byOurClock : FALLBACK_LIFETIME_MS)
  return receivedAt + Math.max(0, remaining - Math.min(SAFETY_MARGIN_MS, remaining / 4))
}

/**
 * How long a solve may take by default: until its challenge goes stale, when the service would
 * refuse the solution anyway (the site's challenge lifetime, 120 s unless set, less the margin),
 * within 10 s to 5 min. A slow device at a step-up's difficulty needs that long, and a search that
 * is cut short starts again from nothing.
 */
const DEFAULT_TIMEOUT_BOUNDS_MS = [10_000, 300_000] as const

let toldOfPageSolve = false

export async function fetchAndSolve(options: FlowOptions): Promise<Solved> {
  const challenge = await requestChallenge(options.apiUrl, options.siteKey, options.signal, options.retryTimeout)
  const receivedAt = Date.now()
  const staleAt = staleTimeOf(challenge, receivedAt)
  const timeoutMs = options.timeoutMs ?? Math.min(Math.max(staleAt - receivedAt, DEFAULT_TIMEOUT_BOUNDS_MS[0]), DEFAULT_TIMEOUT_BOUNDS_MS[1])
  const wasmUrl = new URL(WASM_FILE, options.assetsUrl).href
  const solution = await solveInWorkers({
    challenge: challenge.challenge,
    difficulty: challenge.difficulty,
    workerUrl: new URL(WORKER_FILE, options.assetsUrl).href,
    wasmUrl,
    workers: options.workers,
    timeoutMs,
    signal: options.signal,
    onSearch: options.onSearch,
  }).catch(async (error: unknown) => {
    // solveInWorkers rejects with TollgateErrors only.
    if ((error as TollgateError).code !== 'worker_unavailable') throw error
    // Asked of the service itself (the page reaches it, and its answers carry CORS headers),
    // not of assetsUrl: a CDN without CORS, or not in connect-src, would fail any fetch.
    await checkServed(`${options.apiUrl}/sdk/v1/${WORKER_FILE}`, options.signal)
    // Said once, for the site's developer: its visitors wait longer, and the page is busier.
    if (!toldOfPageSolve) {
      toldOfPageSolve = true
      console.info('Tollgate: no Web Worker could start (CSP worker-src?); solving on the page itself, more slowly')
    }
    return solveOnPage({ challenge: challenge.challenge, difficulty: challenge.difficulty, wasmUrl, timeoutMs: Math.max(0, receivedAt + timeoutMs - Date.now()), signal: options.signal, onSearch: options.onSearch })
  })
  return { challenge, nonce: solution.nonce, solveTimeMs: solution.elapsedMs, staleAt }
}

/**
 * No worker started. That is the page's doing (its CSP, or assets it does not serve), and the
 * page solves instead, only if the service still answers: one that went away since the challenge
 * (a restart, a deploy) is a network_error or server_error, which pages that fail open heed.
 */
async function checkServed(url: string, signal: AbortSignal | undefined): Promise<void> {
  const status = await fetch(url, { signal }).then((response) => response.status, () => 0)
  if (signal?.aborted === true) throw abortedError()
  if (status === 0) throw new TollgateError('network_error', `${url} could not be reached.`)
  if (status >= 500) throw new TollgateError('server_error', `${url} answered ${status}.`, { status })
}

/** A challenge the service refused: a fresh one may pass. */
export function isRetryable(error: unknown): boolean {
  return error instanceof TollgateError && (error.code === 'challenge_expired' || error.code === 'challenge_invalid')
}

/**
 * Solves (or uses an earlier solution), submits with the signals, and follows the service:
 * `challenge` means a step-up (a new, harder challenge, solved and submitted again, up to
 * maxStepUps times); `block` becomes a TollgateError; an expired or invalid challenge is
 * retried once with a fresh one.
 */
export async function runVerification(options: FlowOptions, presolved?: Solved): Promise<ExecuteResult> {
  let solved = presolved !== undefined && presolved.staleAt > Date.now() ? presolved : undefined
  let stepUps = 0
  let retried = false
  for (;;) {
    if (solved === undefined) {
      options.onStatus('solving')
      solved = await fetchAndSolve(options)
    }
    options.onStatus('verifying')
    const current = solved
    solved = undefined
    let verdict
    try {
      verdict = await submitSolution(options.apiUrl, options.siteKey, {
        challengeId: current.challenge.challengeId,
        nonce: current.nonce,
        solveTimeMs: current.solveTimeMs,
        fingerprint: await collectFingerprint(),
        behaviorData: snapshotBehavior(),
        pageAction: options.pageAction,
        cData: options.cData,
      }, options.signal)
    } catch (error) {
      if (isRetryable(error) && !retried) {
        retried = true
        continue
      }
      throw error
    }
    // Aborted while the answer was on its way (reset() as a single-page app leaves the view): its
    // token must not fill or submit a form any more.
    if (options.signal?.aborted === true) throw abortedError()
    const { action, riskScore, token, expiresAt, requestId } = verdict
    if (action === 'allow' && verdict.success && token !== undefined) {
      options.onStatus('verified')
      return { token, riskScore, action, expiresAt: expiresAt ?? '' }
    }
    // What a visitor turned away is told: the reference of the verification's row in the log.
    const turnedAway = { riskScore, requestId, reference: REFERENCE.exec(requestId ?? '')?.[0] }
    if (action === 'challenge') {
      stepUps++
      if (stepUps > options.maxStepUps) {
        throw new TollgateError('challenge_failed', 'Still challenged.', turnedAway)
      }
      continue
    }
    if (action === 'block') throw new TollgateError('blocked', 'Blocked.', turnedAway)
    throw new TollgateError('invalid_response', 'Allowed without a token.')
  }
}

export { defaultWorkerCount }
