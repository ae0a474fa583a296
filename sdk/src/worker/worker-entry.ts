import { loadEngine } from '../solver/load-engine.js'
import { solveGroups } from '../solver/solve-groups.js'
import type { SolveRequest, WorkerReply } from './messages.js'

/**
 * A solver worker: it scans its share of the nonce space until it finds an answer. The scan is
 * one synchronous loop, so the page stops it with terminate() rather than a message.
 */
declare const self: DedicatedWorkerGlobalScope
declare const __TOLLGATE_WASM_FILE__: string

/**
 * The WebAssembly of this worker's own build (its content-hashed name, set by the build), fetched
 * from the folder the page names: the page may come from another build (a site's bundle of the
 * module build, which asks for the worker by its stable name), and the solver's memory layout is
 * this worker's business alone. Unbundled development uses whatever the page names.
 */
function ownSolverUrl(pageWasmUrl: string): string {
  return typeof __TOLLGATE_WASM_FILE__ === 'string' ? new URL(__TOLLGATE_WASM_FILE__, pageWasmUrl).href : pageWasmUrl
}

function reply(message: WorkerReply): void {
  self.postMessage(message)
}

async function solve(request: SolveRequest): Promise<void> {
  const engine = await loadEngine(request.wasmUrl === null ? null : ownSolverUrl(request.wasmUrl))
  reply({ type: 'started', engine: engine.kind })
  let lastReport = performance.now()
  const found = solveGroups(engine, request, {
    onChunk: ({ attempts }) => {
      const now = performance.now()
      if (now - lastReport >= request.progressIntervalMs) {
        lastReport = now
        reply({ type: 'progress', attempts })
      }
    },
  })
  if (found === undefined) reply({ type: 'failed', message: 'the nonce space is exhausted' })
  else reply({ type: 'found', nonce: found.nonce, attempts: found.attempts })
}

self.onmessage = (event: MessageEvent<SolveRequest>) => {
  if (event.data.type !== 'solve') return
  solve(event.data).catch((error: unknown) => {
    reply({ type: 'failed', message: error instanceof Error ? error.message : String(error) })
  })
}
