/**
 * The messages between the page and a solver worker. A site's bundle may hold the module build
 * of an older release, which talks to the worker of the service's current one (by its stable
 * name): add to these, never change or remove what is here.
 */
export interface SolveRequest {
  type: 'solve'
  challenge: string
  difficulty: number
  firstGroup: number
  groupStep: number
  /** Absolute URL of the SIMD module, or null to use the JavaScript engine. */
  wasmUrl: string | null
  progressIntervalMs: number
}

export type WorkerReply =
  | { type: 'started'; engine: 'wasm-simd' | 'js' }
  | { type: 'progress'; attempts: number }
  | { type: 'found'; nonce: string; attempts: number }
  | { type: 'failed'; message: string }
