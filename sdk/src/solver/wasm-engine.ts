import { LANES, PREFIX_WORDS } from './nonce-layout.js'
import type { SearchEngine } from './search-engine.js'

/** Word offsets in the module's memory; they match the generator in sdk/wasm/. */
const MIDSTATE_INDEX = 0
const PREFIX_INDEX = 8

/**
 * The part of the WebAssembly JavaScript API the solver uses, declared here so that the same
 * file type-checks for browsers, workers and Node (whose type definitions lack most of it).
 */
interface WebAssemblyApi {
  compile(bytes: ArrayBuffer | Uint8Array): Promise<object>
  instantiate(module: object, imports: object): Promise<{ exports: Record<string, unknown> }>
}

interface SolverExports {
  memory: { buffer: ArrayBuffer }
  search: (start: number, end: number, threshold: number) => number
}

function webAssembly(): WebAssemblyApi {
  return (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly
}

function isSolverExports(exports: Record<string, unknown>): exports is Record<string, unknown> & SolverExports {
  const memory = exports.memory as { buffer?: unknown } | undefined
  return memory?.buffer instanceof ArrayBuffer && typeof exports.search === 'function'
}

/** Compiles the solver's bytes; rejects without SIMD or under a CSP that forbids WebAssembly. */
export function compileSolver(bytes: ArrayBuffer | Uint8Array): Promise<object> {
  return webAssembly().compile(bytes)
}

/** Instantiates a compiled solver module (a WebAssembly.Module) as a search engine. */
export async function createWasmEngine(module: object): Promise<SearchEngine> {
  const { exports } = await webAssembly().instantiate(module, {})
  if (!isSolverExports(exports)) throw new TypeError('the solver module lacks its exports')
  const words = new Uint32Array(exports.memory.buffer, 0, PREFIX_INDEX + PREFIX_WORDS * LANES)
  const search = exports.search
  return {
    kind: 'wasm-simd',
    load(midstate, lanePrefixWords) {
      for (let i = 0; i < 8; i++) words[MIDSTATE_INDEX + i] = midstate[i] ?? 0
      // Word i of all four lanes sits in one 16-byte vector, so the module loads it at once.
      for (let i = 0; i < PREFIX_WORDS; i++) {
        for (let lane = 0; lane < LANES; lane++) words[PREFIX_INDEX + i * LANES + lane] = lanePrefixWords[lane]?.[i] ?? 0
      }
    },
    search(start, end, threshold) {
      // The module compares unsigned; `| 0` carries thresholds up to 2^31 in an i32.
      return search(start, end, threshold | 0)
    },
  }
}
