import { abortedError, TollgateError } from './errors.js'
import type { SolveRequest, WorkerReply } from './worker/messages.js'

export interface WorkerSolveOptions {
  challenge: string
  difficulty: number
  workerUrl: string
  wasmUrl: string | null
  workers: number
  timeoutMs: number
  signal?: AbortSignal
  /** Called with the attempts of all workers together, a few times a second. */
  onProgress?: (attempts: number) => void
  /** Called once, when the first worker begins its search (its script and WebAssembly downloaded). */
  onSearch?: () => void
}

export interface WorkerSolution {
  nonce: string
  /** Attempts made by all workers until the answer. */
  attempts: number
  elapsedMs: number
  engine: 'wasm-simd' | 'js'
  workers: number
}

export const MAX_WORKERS = 8

let toldOfFallback = false

export function defaultWorkerCount(): number {
  const cores = typeof navigator === 'undefined' ? 2 : navigator.hardwareConcurrency
  return Math.max(1, Math.min(Number.isInteger(cores) && cores > 0 ? cores : 2, MAX_WORKERS))
}

/** A policy gives a TrustedScriptURL, which Worker and importScripts take where they take a string. */
interface ScriptUrlPolicy {
  createScriptURL(url: string): string
}

let policy: ScriptUrlPolicy | null | undefined

/**
 * A page that requires Trusted Types (`require-trusted-types-for 'script'`) starts workers only
 * from URLs a policy vouched for: the SDK's, named in the page's `trusted-types tollgate`. It
 * vouches for whatever it is given, but it never leaves this module, which gives it only the
 * worker and bootstrap URLs made here. A page whose CSP names other policies only and requires
 * none gets no policy, and plain URLs then work.
 */
function scriptUrl(url: string): string {
  if (policy === undefined) {
    try {
      const factory = (self as { trustedTypes?: { createPolicy(name: string, rules: ScriptUrlPolicy): ScriptUrlPolicy } }).trustedTypes
      policy = factory?.createPolicy('tollgate', { createScriptURL: (value) => value }) ?? null
    } catch {
      policy = null
    }
  }
  return policy === null ? url : policy.createScriptURL(url)
}

/**
 * A worker must come from the page's own origin. When the service is elsewhere, a tiny
 * same-origin blob worker imports the real one (the page's CSP then needs `worker-src blob:`).
 * It inherits the page's CSP, Trusted Types included, so it vouches for the URL with a policy of
 * its own that can give only that URL.
 */
function startWorker(workerUrl: string): Worker {
  if (new URL(workerUrl, location.href).origin === location.origin) return new Worker(scriptUrl(workerUrl))
  const url = JSON.stringify(workerUrl)
  const bootstrap = new Blob([
    `let u=${url};try{u=trustedTypes.createPolicy('tollgate',{createScriptURL:()=>u}).createScriptURL('')}catch(e){}importScripts(u)`,
  ], { type: 'text/javascript' })
  const blobUrl = URL.createObjectURL(bootstrap)
  try {
    return new Worker(scriptUrl(blobUrl))
  } finally {
    // The worker has its own reference once created; the URL is only needed to start it.
    setTimeout(() => URL.revokeObjectURL(blobUrl), 10_000)
  }
}

/**
 * Splits the nonce space across workers (worker i scans lane groups i, i + n, i + 2n, ...), takes
 * the first answer, and terminates every worker when it settles: on an answer, an abort, a
 * timeout, or when no worker could run.
 */
export function solveInWorkers(options: WorkerSolveOptions): Promise<WorkerSolution> {
  const count = Math.max(1, Math.min(Math.floor(options.workers), MAX_WORKERS))
  const started = performance.now()
  const workers: Worker[] = []
  const attempts = new Array<number>(count).fill(0)
  let failed = 0
  let searching = false
  let engine: WorkerSolution['engine'] = 'js'

  return new Promise<WorkerSolution>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined = undefined
    const settle = (outcome: () => void) => {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      for (const worker of workers) worker.terminate()
      workers.length = 0
      outcome()
    }
    const onAbort = () => settle(() => reject(abortedError()))
    const onWorkerFailure = () => {
      failed++
      if (failed === count) {
        settle(() => reject(new TollgateError(
          'worker_unavailable',
          `No worker from ${options.workerUrl}`,
        )))
      }
    }
    if (options.signal?.aborted === true) {
      onAbort()
      return
    }
    options.signal?.addEventListener('abort', onAbort, { once: true })
    timer = setTimeout(
      () => settle(() => reject(new TollgateError('timeout', `No solution in ${options.timeoutMs} ms`))),
      options.timeoutMs,
    )

    for (let index = 0; index < count; index++) {
      let worker: Worker
      try {
        worker = startWorker(options.workerUrl)
      } catch {
        onWorkerFailure()
        continue
      }
      workers.push(worker)
      worker.onerror = (event) => {
        event.preventDefault()
        onWorkerFailure()
      }
      worker.onmessage = (event: MessageEvent<WorkerReply>) => {
        const message = event.data
        if (message.type === 'started') {
          if (!searching) options.onSearch?.()
          searching = true
          engine = message.engine
          // Said once, for the site's developer: the visitors of such a page wait about five times longer.
          if (engine === 'js' && options.wasmUrl !== null && !toldOfFallback) {
            toldOfFallback = true
            console.info("Tollgate: no WebAssembly (CSP 'wasm-unsafe-eval'?)")
          }
        } else if (message.type === 'progress') {
          attempts[index] = message.attempts
          options.onProgress?.(attempts.reduce((total, value) => total + value, 0))
        } else if (message.type === 'found') {
          attempts[index] = message.attempts
          const total = attempts.reduce((sum, value) => sum + value, 0)
          const elapsedMs = Math.round(performance.now() - started)
          settle(() => resolve({ nonce: message.nonce, attempts: total, elapsedMs, engine, workers: count }))
        } else {
          onWorkerFailure()
        }
      }
      const request: SolveRequest = {
        type: 'solve',
        challenge: options.challenge,
        difficulty: options.difficulty,
        firstGroup: index,
        groupStep: count,
        wasmUrl: options.wasmUrl,
        progressIntervalMs: 250,
      }
      worker.postMessage(request)
    }
  })
}
