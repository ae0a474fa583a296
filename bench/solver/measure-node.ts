/**
 * Attempts per second of both solver engines in Node (one thread): a quick check while working
 * on the generator. The figures in bench/README.md come from run-solver-bench.ts (Chromium).
 * Run: npx tsx bench/solver/measure-node.ts
 */
import { randomBytes } from 'node:crypto'
import { assembleSolver } from '../../scripts/build-sdk.js'
import { createJsEngine } from '../../sdk/src/solver/js-engine.js'
import type { SearchEngine } from '../../sdk/src/solver/search-engine.js'
import { solveGroups } from '../../sdk/src/solver/solve-groups.js'
import { compileSolver, createWasmEngine } from '../../sdk/src/solver/wasm-engine.js'

const GROUP_ATTEMPTS = 40_000

function measure(engine: SearchEngine, seconds: number): number {
  const challenge = randomBytes(32).toString('hex')
  const started = performance.now()
  let attempts = 0
  for (let group = 0; performance.now() - started < seconds * 1000; group++) {
    // Difficulty 40 is out of reach, so each call scans one whole group.
    solveGroups(engine, { challenge, difficulty: 40, firstGroup: group, groupStep: 1 }, { maxGroups: 1 })
    attempts += GROUP_ATTEMPTS
  }
  return attempts / ((performance.now() - started) / 1000)
}

const format = (rate: number) => `${(rate / 1e6).toFixed(2)} M attempts/s`
const wasm = await createWasmEngine(await compileSolver(await assembleSolver()))
measure(wasm, 1) // lets V8 move the module to its optimising tier
process.stdout.write(`wasm-simd: ${format(measure(wasm, 3))}\n`)
const js = createJsEngine()
measure(js, 1)
process.stdout.write(`js:        ${format(measure(js, 3))}\n`)
