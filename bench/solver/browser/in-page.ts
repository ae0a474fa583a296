/// <reference lib="dom" />
/**
 * The benchmark's page code (bundled by run-solver-bench.ts): each function measures one solver
 * in Web Workers and returns plain numbers to the Node side.
 */
import { solveInWorkers } from '../../../sdk/src/solve-in-workers.js'

interface Assets {
  tollgateWorker: string
  tollgateWasm: string
  capWorker: string
  capWasm: string
  altchaWorker: string
}

interface Rate {
  attemptsPerSecond: number
  engine?: string
}

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/** Steady-state attempts per second of Tollgate's workers: the slope between progress reports. */
async function measureTollgate(assets: Assets, workers: number, durationMs: number, wasm: boolean): Promise<Rate> {
  const samples: { time: number; attempts: number }[] = []
  await solveInWorkers({
    challenge: randomHex(32),
    difficulty: 48, // out of reach: the workers scan until the timeout
    workerUrl: assets.tollgateWorker,
    wasmUrl: wasm ? assets.tollgateWasm : null,
    workers,
    timeoutMs: durationMs,
    onProgress: (attempts) => samples.push({ time: performance.now(), attempts }),
  }).catch(() => undefined)
  // Skip the first second: worker start, compilation and the optimising tier.
  const steady = samples.filter((sample) => sample.time - (samples[0]?.time ?? 0) >= 1000)
  const first = steady[0]
  const last = steady[steady.length - 1]
  if (first === undefined || last === undefined || last.time === first.time) return { attemptsPerSecond: 0 }
  return { attemptsPerSecond: ((last.attempts - first.attempts) / (last.time - first.time)) * 1000 }
}

function runWorker<T>(worker: Worker, message: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<T>) => resolve(event.data)
    worker.onerror = (event) => reject(new Error(event.message))
    worker.postMessage(message)
  })
}

async function measureCap(assets: Assets, durationMs: number): Promise<Rate> {
  const worker = new Worker(assets.capWorker, { type: 'module' })
  try {
    // 5 hex digits = 20 bits, about a million attempts per solve: the per-solve overhead is noise.
    await runWorker(worker, { wasmUrl: assets.capWasm, durationMs: 1000, target: '00000' })
    const result = await runWorker<{ attempts: number; elapsedMs: number }>(worker, { wasmUrl: assets.capWasm, durationMs, target: '00000' })
    return { attemptsPerSecond: (result.attempts / result.elapsedMs) * 1000 }
  } finally {
    worker.terminate()
  }
}

interface AltchaSolution {
  counter: number
  time: number
}

async function measureAltcha(assets: Assets, durationMs: number): Promise<Rate> {
  const worker = new Worker(assets.altchaWorker)
  const solveOne = () => runWorker<AltchaSolution | null>(worker, {
    type: 'work',
    challenge: { parameters: { algorithm: 'SHA-256', nonce: randomHex(16), salt: randomHex(16), cost: 1, keyLength: 32, keyPrefix: '0000' } },
    counterStart: 0,
    counterStep: 1,
    counterMode: 'uint32',
    timeout: 60_000,
  })
  try {
    const warmUntil = performance.now() + 1000
    while (performance.now() < warmUntil) await solveOne()
    let attempts = 0
    let elapsed = 0
    while (elapsed < durationMs) {
      const solution = await solveOne()
      if (solution === null) break
      attempts += solution.counter + 1
      elapsed += solution.time
    }
    return { attemptsPerSecond: (attempts / elapsed) * 1000 }
  } finally {
    worker.terminate()
  }
}

/** Wall time of whole solves as a page sees them: workers started, the answer found, workers ended. */
async function measureSolves(assets: Assets, count: number, difficulty: number, workers: number): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    await solveInWorkers({
      challenge: randomHex(32), difficulty, workerUrl: assets.tollgateWorker, wasmUrl: assets.tollgateWasm, workers, timeoutMs: 60_000,
    })
    times.push(performance.now() - started)
  }
  return times
}

Object.assign(window, { bench: { measureTollgate, measureCap, measureAltcha, measureSolves } })
