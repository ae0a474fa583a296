/**
 * The solver benchmark (npm run bench:solver). In headless Debian Chromium, in the same run:
 *   - attempts per second per worker: Tollgate (SIMD WebAssembly, and its JavaScript fallback),
 *     Cap (@cap.js/wasm) and ALTCHA (its SHA worker), each a median of ROUNDS interleaved rounds;
 *   - Tollgate with all the machine's workers, and the wall time of whole solves at the default
 *     difficulty (workers started, answer found, workers ended), as a page sees it;
 *   - openssl speed -evp sha256 on one core, as the native ceiling;
 *   - the gzip size of what a page loads (tollgate.js + worker + WebAssembly).
 * It prints the Markdown for the "Solver" section of bench/README.md.
 */
import { execFileSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { cpus, tmpdir } from 'node:os'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { chromium } from 'playwright-core'
import { buildSdk } from '../../scripts/build-sdk.js'
import { defaultSiteSettings } from '../../src/domain/sites/site.js'

const ROUNDS = 5
const MEASURE_MS = 3_000
const SOLVES = 41
const here = fileURLToPath(new URL('.', import.meta.url))
const root = join(here, '..', '..')

interface Rate {
  attemptsPerSecond: number
}

interface BenchApi {
  measureTollgate(assets: Assets, workers: number, durationMs: number, wasm: boolean): Promise<Rate>
  measureCap(assets: Assets, durationMs: number): Promise<Rate>
  measureAltcha(assets: Assets, durationMs: number): Promise<Rate>
  measureSolves(assets: Assets, count: number, difficulty: number, workers: number): Promise<number[]>
}

interface Assets {
  tollgateWorker: string
  tollgateWasm: string
  capWorker: string
  capWasm: string
  altchaWorker: string
}

const contentTypes: Record<string, string> = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' }

async function bundle(entry: string, format: 'iife' | 'esm'): Promise<Uint8Array> {
  const result = await build({ entryPoints: [join(here, 'browser', entry)], bundle: true, write: false, format, target: ['es2020'] })
  return result.outputFiles[0]?.contents ?? new Uint8Array()
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? 0
}

/** openssl's single-core SHA-256 throughput on 8 KiB blocks, as compressions (64-byte blocks) per second. */
function measureOpenssl(): { compressionsPerSecond: number; version: string } {
  const output = execFileSync('openssl', ['speed', '-seconds', '3', '-bytes', '8192', '-evp', 'sha256'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  const line = output.split('\n').find((text) => /^sha256\s/i.test(text.trim()))
  const match = line?.match(/([\d.]+)k\s*$/)
  const bytesPerSecond = match === null || match === undefined ? 0 : Number(match[1]) * 1000
  const version = execFileSync('openssl', ['version'], { encoding: 'utf8' }).split(' (')[0]?.trim() ?? 'openssl'
  return { compressionsPerSecond: bytesPerSecond / 64, version }
}

const millions = (rate: number) => `${(rate / 1e6).toFixed(2)} M/s`
const ratio = (value: number, base: number) => (base > 0 ? `${(value / base).toFixed(value / base < 0.1 ? 2 : 1)}x` : 'n/a')

async function main(): Promise<void> {
  const sdkDirectory = join(tmpdir(), `tollgate-bench-sdk-${process.pid}`)
  const manifest = await buildSdk(sdkDirectory)
  const workerName = manifest.files.find((file) => file.name.startsWith('tollgate-worker.'))?.name ?? ''
  const wasmName = manifest.files.find((file) => file.name.startsWith('tollgate-solver.'))?.name ?? ''
  const files = new Map<string, Uint8Array>([
    ['/index.html', new TextEncoder().encode('<!doctype html><meta charset="utf-8"><title>solver bench</title><script src="/in-page.js"></script>')],
    ['/in-page.js', await bundle('in-page.ts', 'iife')],
    ['/cap-worker.js', await bundle('cap-worker.ts', 'esm')],
    ['/cap_wasm_bg.wasm', await readFile(join(root, 'node_modules/@cap.js/wasm/browser/cap_wasm_bg.wasm'))],
    ['/altcha-sha.js', await readFile(join(root, 'node_modules/altcha/dist/workers/sha.js'))],
    [`/${workerName}`, await readFile(join(sdkDirectory, workerName))],
    [`/${wasmName}`, await readFile(join(sdkDirectory, wasmName))],
  ])
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname
    const body = files.get(path === '/' ? '/index.html' : path)
    if (body === undefined) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': contentTypes[extname(path)] ?? 'text/html' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const assets: Assets = {
    tollgateWorker: `${origin}/${workerName}`,
    tollgateWasm: `${origin}/${wasmName}`,
    capWorker: `${origin}/cap-worker.js`,
    capWasm: `${origin}/cap_wasm_bg.wasm`,
    altchaWorker: `${origin}/altcha-sha.js`,
  }

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  try {
    const page = await browser.newPage()
    await page.goto(origin)
    await page.waitForFunction(() => 'bench' in window)
    const call = <T>(name: keyof BenchApi, ...args: unknown[]) =>
      page.evaluate(([method, parameters]) => {
        const api = (window as unknown as { bench: Record<string, (...values: unknown[]) => Promise<unknown>> }).bench
        return api[method]?.(...parameters)
      }, [name, args] as const) as Promise<T>
    const workers = await page.evaluate(() => Math.min(navigator.hardwareConcurrency, 8))

    const rounds = { tollgate: [] as number[], tollgateJs: [] as number[], cap: [] as number[], altcha: [] as number[], tollgateAll: [] as number[] }
    for (let round = 0; round < ROUNDS; round++) {
      process.stderr.write(`round ${round + 1}/${ROUNDS}\n`)
      rounds.tollgate.push((await call<Rate>('measureTollgate', assets, 1, MEASURE_MS + 1000, true)).attemptsPerSecond)
      rounds.cap.push((await call<Rate>('measureCap', assets, MEASURE_MS)).attemptsPerSecond)
      rounds.altcha.push((await call<Rate>('measureAltcha', assets, MEASURE_MS)).attemptsPerSecond)
      rounds.tollgateJs.push((await call<Rate>('measureTollgate', assets, 1, MEASURE_MS + 1000, false)).attemptsPerSecond)
      rounds.tollgateAll.push((await call<Rate>('measureTollgate', assets, workers, MEASURE_MS + 1000, true)).attemptsPerSecond)
    }
    const difficulty = defaultSiteSettings.difficulty
    process.stderr.write(`${SOLVES} solves at difficulty ${difficulty}\n`)
    const solves = await call<number[]>('measureSolves', assets, SOLVES, difficulty, workers)
    const openssl = measureOpenssl()
    const version = browser.version()

    const tollgate = median(rounds.tollgate)
    const cap = median(rounds.cap)
    const altcha = median(rounds.altcha)
    const tollgateJs = median(rounds.tollgateJs)
    const tollgateAll = median(rounds.tollgateAll)
    const cpu = cpus()[0]?.model ?? 'unknown CPU'
    const lines = [
      '## Solver',
      '',
      `Command: \`npm run bench:solver\` (needs Debian's \`chromium\` and \`openssl\`). Run on ${new Date().toISOString().slice(0, 10)}:`,
      `${cpu}, ${cpus().length} cores, headless Chromium ${version}, ${openssl.version}. Each per-worker rate is the median of`,
      `${ROUNDS} interleaved rounds of ${MEASURE_MS / 1000} s after a 1 s warm-up; every baseline was measured in the same run.`,
      '',
      '| Solver (one Web Worker) | Attempts/s | vs Cap | vs ALTCHA |',
      '|---|---|---|---|',
      `| Tollgate, WebAssembly SIMD (4 lanes, midstate) | ${millions(tollgate)} | **${ratio(tollgate, cap)}** | ${ratio(tollgate, altcha)} |`,
      `| Tollgate, JavaScript fallback | ${millions(tollgateJs)} | ${ratio(tollgateJs, cap)} | ${ratio(tollgateJs, altcha)} |`,
      `| Cap (\`@cap.js/wasm\`, 32-character salt) | ${millions(cap)} | 1.0x | ${ratio(cap, altcha)} |`,
      `| ALTCHA (\`altcha\` SHA worker, \`crypto.subtle\`) | ${millions(altcha)} | ${ratio(altcha, cap)} | 1.0x |`,
      `| Native ceiling: \`openssl speed -evp sha256\`, one core, 8 KiB blocks, as 64-byte compressions | ${millions(openssl.compressionsPerSecond)} | ${ratio(openssl.compressionsPerSecond, cap)} | ${ratio(openssl.compressionsPerSecond, altcha)} |`,
      '',
      `Tollgate reaches ${ratio(tollgate, openssl.compressionsPerSecond).replace('x', '')} of the native single-core rate per worker; the target was at least 4x Cap.`,
      `With all ${workers} workers the machine gives: ${millions(tollgateAll)} in all.`,
      '',
      `Whole solves at the default difficulty (${difficulty} bits, ${workers} workers, ${SOLVES} random challenges, workers started and ended each time):`,
      `median **${Math.round(median(solves))} ms**, p90 ${Math.round(percentile(solves, 0.9))} ms, max ${Math.round(Math.max(...solves))} ms (target: median under 500 ms).`,
      '',
      `Size a page loads (gzip): **${manifest.loadedGzipBytes} bytes** in all (target under 15 kB): ` +
        // The hashed worker and WebAssembly a page loads (the stable-named worker is the same file).
        ['tollgate.js', /^tollgate-worker\.[0-9a-f]{12}\.js$/, /^tollgate-solver\./, 'compat.js', 'gate.js']
          .map((name) => manifest.files.find((file) => (typeof name === 'string' ? file.name === name : name.test(file.name))))
          .filter((file) => file !== undefined)
          .map((file) => `${file.name.replace(/\.[0-9a-f]{12}\./, '.')} ${file.gzipBytes}`)
          .join(', ')
          .replace(/, compat\.js/, '; the other entry scripts: compat.js') + '.',
      `With Brotli (every current browser over https): **${manifest.loadedBrotliBytes} bytes** for the same three files.`,
      '',
    ]
    process.stdout.write(`${lines.join('\n')}\n`)
  } finally {
    await browser.close()
    server.close()
  }
}

await main()
