/**
 * Cap's solver (npm @cap.js/wasm, Rust sha2 compiled to WebAssembly) in a module worker: solves
 * Cap-shaped challenges (32 hex characters of salt, a hex prefix target) back to back for the
 * given time and reports the attempts it made (each solve makes nonce + 1).
 */
import init, { solve_pow } from '@cap.js/wasm/browser/cap_wasm.js'

/** The worker global, typed here because the project's TypeScript program has no worker library. */
declare const self: {
  onmessage: ((event: { data: CapRequest }) => void) | null
  postMessage(message: unknown): void
}

interface CapRequest {
  wasmUrl: string
  durationMs: number
  target: string
}

function randomSalt(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
}

self.onmessage = (event) => {
  void measure(event.data)
}

async function measure(request: CapRequest): Promise<void> {
  const { wasmUrl, durationMs, target } = request
  await init({ module_or_path: wasmUrl })
  const started = performance.now()
  let attempts = 0
  while (performance.now() - started < durationMs) attempts += Number(solve_pow(randomSalt(), target)) + 1
  self.postMessage({ attempts, elapsedMs: performance.now() - started })
}
