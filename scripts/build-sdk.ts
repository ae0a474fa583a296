/**
 * Builds the browser SDK into dist/sdk/ (or the directory given as the first argument):
 *   tollgate.js                      the script-tag build (sets window.Tollgate, binds forms)
 *   tollgate.mjs                     the module build for sites that bundle the SDK
 *   compat.js                        the vendors' page APIs (turnstile, grecaptcha, hcaptcha) over the SDK
 *   tollgate-worker.<hash>.js        the solver worker
 *   tollgate-solver.<hash>.wasm      the SIMD solver, assembled with wabt from generated text
 *   tollgate-worker.js               the worker under a stable name, for the module build
 *   tollgate.<hash>.js, tollgate.<hash>.mjs, compat.<hash>.js
 *                                    the entry scripts again under content-hashed names, for pages that pin them with integrity
 *   integrity.json                   each entry script's hashed name and Subresource Integrity, served for pages to read
 *   strings/<language>.json          the SDK's texts in each language it speaks (sdk/src/translations/), fetched by the SDK
 *   <file>.br, <file>.gz             each file Brotli- and gzip-compressed, for the browsers that take them
 *   tollgate.d.ts                    the SDK's types (sdk/tollgate.d.ts), for pages written in TypeScript
 *   manifest.json
 * The worker and the WebAssembly carry a content hash in their names so they can be cached for
 * a year; the entry scripts keep fixed names and a shorter cache lifetime, and a copy each under
 * a hashed name, cached for a year, which a page may pin with an `integrity` attribute.
 * Every file is written to a temporary name and renamed, so concurrent builds (test suites)
 * never serve a half-written file.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import { minify } from 'terser'
import wabtInit from 'wabt'
import { translations } from '../sdk/src/translations/index.js'
import { generateSolverWat } from '../sdk/wasm/generate-solver-wat.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const defaultSdkDirectory = join(root, 'dist', 'sdk')
/**
 * The names the module build asks for (see buildSdk). Only the worker is served by it: the worker
 * fetches its own build's WebAssembly from the folder the other name points into.
 */
export const STABLE_WORKER_NAME = 'tollgate-worker.js'
export const STABLE_WASM_NAME = 'tollgate-solver.wasm'
/** The vendors' page APIs (sdk/src/compat-entry.ts), also served at the vendors' script paths. */
export const COMPAT_NAME = 'compat.js'

/** The script of the gate's page (sdk/src/gate-entry.ts, docs/gate.md). */
export const GATE_NAME = 'gate.js'

/** The SDK's hand-written types (sdk/tollgate.d.ts), served as they are. */
export const TYPES_NAME = 'tollgate.d.ts'

/** The folder of the SDK's texts, one `{language}.json` per language (sdk/src/language.ts), which the SDK fetches by that name. */
export const STRINGS_FOLDER = 'strings'

/** Each pinnable entry script's hashed name and integrity, by its stable name (sdk/README.md, "Subresource Integrity"). */
export const INTEGRITY_NAME = 'integrity.json'

/** The entry scripts a site's page loads from the service, which it may pin (gate.js is loaded by the service's own gate page). */
const PINNABLE_NAMES: readonly string[] = ['tollgate.js', 'tollgate.mjs', COMPAT_NAME]

export interface PinnedScript {
  /** The same bytes under a content-hashed name, served for a year as long as the file is kept (`tollgate.<hash>.js`). */
  pinnedName: string
  integrity: string
}

export interface SdkFile {
  name: string
  contentType: string
  /** Content-hashed names never change content, so they may be cached forever. */
  immutable: boolean
  bytes: number
  gzipBytes: number
  brotliBytes: number
  /** Subresource Integrity of the plain bytes (`sha384-<base64>`), what a page's `integrity` attribute names. */
  integrity: string
  /** An entry script's content-hashed copy (PINNABLE_NAMES). */
  pinnedName?: string
}

export interface SdkManifest {
  builtAt: string
  files: SdkFile[]
  /** The sum over the files a browser loads: tollgate.js, the worker and the WebAssembly. */
  loadedGzipBytes: number
  /** The same for a browser that takes Brotli (every current one does, over https). */
  loadedBrotliBytes: number
}

function hashOf(content: Uint8Array): string {
  return createHash('sha256').update(content).digest('hex').slice(0, 12)
}

function integrityOf(content: Uint8Array): string {
  return `sha384-${createHash('sha384').update(content).digest('base64')}`
}

/** `tollgate.js` -> `tollgate.<hash>.js`: the hash before the extension, as the worker's and the WebAssembly's. */
function pinnedNameOf(name: string, content: Uint8Array): string {
  const dot = name.lastIndexOf('.')
  return `${name.slice(0, dot)}.${hashOf(content)}${name.slice(dot)}`
}

/**
 * Brotli at its best quality: the files are compressed once per build and sent many times, so
 * the build's extra second costs nothing a visitor sees. The size hint tunes the encoder to the file.
 */
function compressWithBrotli(content: Uint8Array): Buffer {
  return brotliCompressSync(content, {
    params: { [zlibConstants.BROTLI_PARAM_QUALITY]: zlibConstants.BROTLI_MAX_QUALITY, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: content.length },
  })
}

async function writeAtomically(path: string, content: Uint8Array | string): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`
  await writeFile(temporary, content)
  await rename(temporary, path)
}

export async function assembleSolver(): Promise<Uint8Array> {
  const wabt = await wabtInit()
  const module = wabt.parseWat('tollgate-solver.wat', generateSolverWat(), { simd: true })
  try {
    module.validate()
    return new Uint8Array(module.toBinary({}).buffer)
  } finally {
    module.destroy()
  }
}

async function bundle(entry: string, format: 'iife' | 'esm', define: Record<string, string> = {}): Promise<Uint8Array> {
  const result = await build({
    entryPoints: [join(root, 'sdk', 'src', entry)],
    bundle: true,
    write: false,
    format,
    minify: true,
    target: ['es2020'],
    legalComments: 'none',
    define,
  })
  const output = result.outputFiles[0]
  if (output === undefined) throw new Error(`esbuild produced nothing for ${entry}`)
  // esbuild bundles and minifies fast; terser's compressor then takes out what esbuild leaves (its
  // passes fold and inline across the bundle): 3% of the gzip bytes a page loads, the room the
  // script's features pay for themselves from (bench/README.md, "Size a page loads").
  const { code } = await minify(output.text, { ecma: 2020, module: format === 'esm', compress: { passes: 2 }, format: { comments: false } })
  if (code === undefined) throw new Error(`terser produced nothing for ${entry}`)
  return new TextEncoder().encode(code)
}

export async function buildSdk(outDirectory: string = defaultSdkDirectory): Promise<SdkManifest> {
  await mkdir(join(outDirectory, STRINGS_FOLDER), { recursive: true })
  const wasm = await assembleSolver()
  const wasmName = `tollgate-solver.${hashOf(wasm)}.wasm`
  // The worker loads its own build's WebAssembly, whatever the page asks for (worker-entry.ts).
  const worker = await bundle('worker/worker-entry.ts', 'iife', { __TOLLGATE_WASM_FILE__: JSON.stringify(wasmName) })
  const workerName = `tollgate-worker.${hashOf(worker)}.js`
  const define = (workerFile: string, wasmFile: string) => ({ __TOLLGATE_WORKER_FILE__: JSON.stringify(workerFile), __TOLLGATE_WASM_FILE__: JSON.stringify(wasmFile) })
  // The script tag's build is served by the service it belongs to: its worker's name carries the
  // content hash, cached for a year. The module build goes into sites' own bundles and lives on
  // there across the service's upgrades, when those names are gone: it asks for the worker by its
  // stable name, which always serves the current build's, and that worker loads its own build's
  // WebAssembly by its hashed name, so the two always match.
  const script = await bundle('browser-entry.ts', 'iife', define(workerName, wasmName))
  const module = await bundle('index.ts', 'esm', define(STABLE_WORKER_NAME, STABLE_WASM_NAME))
  const compat = await bundle('compat-entry.ts', 'iife', define(workerName, wasmName))
  const gate = await bundle('gate-entry.ts', 'iife', define(workerName, wasmName))

  const outputs: { name: string; content: Uint8Array; contentType: string; immutable: boolean; pinnedName?: string }[] = [
    { name: 'tollgate.js', content: script, contentType: 'text/javascript; charset=utf-8', immutable: false },
    { name: 'tollgate.mjs', content: module, contentType: 'text/javascript; charset=utf-8', immutable: false },
    { name: COMPAT_NAME, content: compat, contentType: 'text/javascript; charset=utf-8', immutable: false },
    { name: GATE_NAME, content: gate, contentType: 'text/javascript; charset=utf-8', immutable: false },
    { name: workerName, content: worker, contentType: 'text/javascript; charset=utf-8', immutable: true },
    { name: wasmName, content: wasm, contentType: 'application/wasm', immutable: true },
    { name: STABLE_WORKER_NAME, content: worker, contentType: 'text/javascript; charset=utf-8', immutable: false },
    // Served beside the script for the script tag's pages written in TypeScript (window.Tollgate's
    // type); plain text, so that a browser shows it, and never run (the service sends nosniff).
    { name: TYPES_NAME, content: await readFile(join(root, 'sdk', TYPES_NAME)), contentType: 'text/plain; charset=utf-8', immutable: false },
    // Stable names, as the SDK of any build asks for them; a day's cache lets a corrected text reach visitors.
    ...Object.entries(translations).map(([language, texts]) => ({
      name: `${STRINGS_FOLDER}/${language}.json`,
      content: new TextEncoder().encode(JSON.stringify(texts)),
      contentType: 'application/json; charset=utf-8',
      immutable: false,
    })),
  ]
  // Each entry script again under its content-hashed name, and the names and hashes a page pins them by.
  const pinned: Record<string, PinnedScript> = {}
  for (const output of outputs.filter((candidate) => PINNABLE_NAMES.includes(candidate.name))) {
    const pinnedName = pinnedNameOf(output.name, output.content)
    output.pinnedName = pinnedName
    pinned[output.name] = { pinnedName, integrity: integrityOf(output.content) }
    outputs.push({ name: pinnedName, content: output.content, contentType: output.contentType, immutable: true })
  }
  outputs.push({ name: INTEGRITY_NAME, content: new TextEncoder().encode(`${JSON.stringify(pinned, null, 2)}\n`), contentType: 'application/json; charset=utf-8', immutable: false })
  const files: SdkFile[] = []
  for (const output of outputs) {
    const gzipped = gzipSync(output.content, { level: 9 })
    const brotli = compressWithBrotli(output.content)
    await writeAtomically(join(outDirectory, output.name), output.content)
    await writeAtomically(join(outDirectory, `${output.name}.gz`), gzipped)
    await writeAtomically(join(outDirectory, `${output.name}.br`), brotli)
    files.push({
      name: output.name,
      contentType: output.contentType,
      immutable: output.immutable,
      bytes: output.content.length,
      gzipBytes: gzipped.length,
      brotliBytes: brotli.length,
      integrity: integrityOf(output.content),
      ...output.pinnedName === undefined ? {} : { pinnedName: output.pinnedName },
    })
  }
  const loaded = files.filter((file) => ['tollgate.js', workerName, wasmName].includes(file.name))
  const manifest: SdkManifest = {
    builtAt: new Date().toISOString(),
    files,
    loadedGzipBytes: loaded.reduce((total, file) => total + file.gzipBytes, 0),
    loadedBrotliBytes: loaded.reduce((total, file) => total + file.brotliBytes, 0),
  }
  await writeAtomically(join(outDirectory, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  return manifest
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const manifest = await buildSdk(process.argv[2] === undefined ? undefined : resolve(process.argv[2]))
  for (const file of manifest.files) {
    process.stdout.write(`${file.name.padEnd(36)} ${String(file.bytes).padStart(7)} B  ${String(file.gzipBytes).padStart(6)} B gzip  ${String(file.brotliBytes).padStart(6)} B br\n`)
  }
  process.stdout.write(`loaded by a page (script + worker + wasm): ${manifest.loadedGzipBytes} B gzip, ${manifest.loadedBrotliBytes} B br\n`)
}
