import { abortedError, TollgateError } from './errors.js'
import { loadEngine } from './solver/load-engine.js'
import { scanGroups } from './solver/solve-groups.js'

export interface PageSolveOptions {
  challenge: string
  difficulty: number
  /** The solver's WebAssembly; null, or unusable: the JavaScript engine. */
  wasmUrl: string | null
  timeoutMs: number
  signal?: AbortSignal
  /** Called once, when the search begins (the engine loaded). */
  onSearch?: () => void
}

export interface PageSolution {
  nonce: string
  attempts: number
  elapsedMs: number
  engine: 'wasm-simd' | 'js'
}

/**
 * How long the search holds the page at a time: well within the 50 ms after which a task counts
 * as long (a click or a key waits for it), and a frame of 60 Hz's 16.7 ms has room for the page's
 * own work beside it. Each engine call of PAGE_CHUNK suffixes (four hashes each) takes a few
 * milliseconds in JavaScript on a phone, and far less in WebAssembly.
 */
const SLICE_MS = 8
const PAGE_CHUNK = 256

/**
 * Lets the page run its own tasks (input, rendering) before the search goes on. scheduler.yield
 * where the browser has it; else a message to itself, which, unlike a timer, a background tab
 * does not slow to one a second.
 */
function yieldToPage(): Promise<void> {
  const scheduler = (globalThis as { scheduler?: { yield?: () => Promise<void> } }).scheduler
  if (typeof scheduler?.yield === 'function') return scheduler.yield()
  return new Promise((resolve) => {
    const channel = new MessageChannel()
    channel.port1.onmessage = () => {
      channel.port1.close()
      resolve()
    }
    channel.port2.postMessage(null)
  })
}

/**
 * Solves on the page's own thread, for a page where no worker can start (a CSP whose worker-src
 * or script-src does not allow the SDK's blob: worker, or a worker file the service no longer
 * serves): the whole nonce space in one scan, in slices of SLICE_MS between which the page runs.
 * Slower than the workers (one thread, and a slice's pauses), but the visitor gets through.
 */
export async function solveOnPage(options: PageSolveOptions): Promise<PageSolution> {
  const started = performance.now()
  const deadline = started + options.timeoutMs
  // Read again after each wait: reset() may abort it meanwhile.
  const isAborted = () => options.signal?.aborted === true
  const engine = await loadEngine(options.wasmUrl)
  if (isAborted()) throw abortedError()
  options.onSearch?.()
  const scan = scanGroups(engine, { challenge: options.challenge, difficulty: options.difficulty, firstGroup: 0, groupStep: 1 }, { chunk: PAGE_CHUNK })
  for (;;) {
    const sliceEnd = performance.now() + SLICE_MS
    let step = scan.next()
    while (step.done !== true && performance.now() < sliceEnd) step = scan.next()
    if (step.done === true) {
      if (step.value === undefined) throw new TollgateError('timeout', 'No solution in the whole nonce space')
      return { nonce: step.value.nonce, attempts: step.value.attempts, elapsedMs: Math.round(performance.now() - started), engine: engine.kind }
    }
    await yieldToPage()
    if (isAborted()) throw abortedError()
    if (performance.now() >= deadline) throw new TollgateError('timeout', `No solution in ${options.timeoutMs} ms`)
  }
}
