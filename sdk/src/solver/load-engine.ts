import { createJsEngine } from './js-engine.js'
import type { SearchEngine } from './search-engine.js'
import { compileSolver, createWasmEngine } from './wasm-engine.js'

/**
 * The SIMD WebAssembly engine from `wasmUrl`, else the JavaScript one: without SIMD, under a CSP
 * without 'wasm-unsafe-eval', or when the file is unreachable, the JavaScript engine finds the
 * same nonces, only slower.
 */
export async function loadEngine(wasmUrl: string | null): Promise<SearchEngine> {
  if (wasmUrl !== null && typeof WebAssembly === 'object') {
    try {
      const response = await fetch(wasmUrl, { credentials: 'omit' })
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      return await createWasmEngine(await compileSolver(await response.arrayBuffer()))
    } catch {
      // Falls through to JavaScript.
    }
  }
  return createJsEngine()
}
