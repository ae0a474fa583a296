/** The messages between the page and a solver worker. */
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
