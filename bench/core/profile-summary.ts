/**
 * Summarises a V8 CPU profile written by the core-flow benchmark's server (BENCH_CPU_PROF=<dir>):
 * where the server's time went, by package or source file and by function, as shares of the
 * profile's busy time (idle and garbage collection are listed apart), and by function of this
 * repository with everything it calls.
 *
 *   node --import tsx bench/core/profile-summary.ts <file.cpuprofile> [top]
 */
import { readFileSync } from 'node:fs'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const [file, topText] = process.argv.slice(2)
if (file === undefined) {
  process.stderr.write('usage: profile-summary.ts <file.cpuprofile> [top]\n')
  process.exit(2)
}
const top = Number(topText ?? 30)
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile

/** node_modules/<package>, a file of this repository, or a Node internal. */
function placeOf(url: string): string {
  if (url === '') return '(native or V8)'
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (packageMatch?.[1] !== undefined) return packageMatch[1]
  const repositoryMatch = /\/(src|bench|sdk)\/(.*)$/.exec(url)
  if (repositoryMatch !== null) return `${repositoryMatch[1]}/${repositoryMatch[2]}`
  if (url.startsWith('node:')) return url
  return url
}

const selfMicros = new Map<number, number>()
profile.samples.forEach((nodeId, index) => {
  selfMicros.set(nodeId, (selfMicros.get(nodeId) ?? 0) + (profile.timeDeltas[index] ?? 0))
})

const byPlace = new Map<string, number>()
const byFunction = new Map<string, number>()
let idle = 0
let garbageCollection = 0
let busy = 0
for (const node of profile.nodes) {
  const micros = selfMicros.get(node.id) ?? 0
  if (micros === 0) continue
  const { functionName, url, lineNumber } = node.callFrame
  if (functionName === '(idle)') {
    idle += micros
    continue
  }
  if (functionName === '(garbage collector)') garbageCollection += micros
  busy += micros
  const place = placeOf(url)
  byPlace.set(place, (byPlace.get(place) ?? 0) + micros)
  const name = `${functionName || '(anonymous)'} ${place}${url === '' ? '' : `:${lineNumber + 1}`}`
  byFunction.set(name, (byFunction.get(name) ?? 0) + micros)
}

// Each busy sample charged to the nearest frame of this repository on its stack (or to the place
// of its own frame when there is none): what our code costs, including what it calls.
const parentOf = new Map<number, ProfileNode>()
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node)
const nodeById = new Map(profile.nodes.map((node) => [node.id, node]))
const byOwnCode = new Map<string, number>()
for (const [nodeId, micros] of selfMicros) {
  const node = nodeById.get(nodeId)
  if (node === undefined || node.callFrame.functionName === '(idle)') continue
  let frame: ProfileNode | undefined = node
  while (frame !== undefined && !/\/(src|bench)\//.test(frame.callFrame.url)) frame = parentOf.get(frame.id)
  const name = frame === undefined
    ? `(no own frame) ${placeOf(node.callFrame.url)}`
    : `${frame.callFrame.functionName || '(anonymous)'} ${placeOf(frame.callFrame.url)}:${frame.callFrame.lineNumber + 1}`
  byOwnCode.set(name, (byOwnCode.get(name) ?? 0) + micros)
}

// Each busy sample charged to every distinct function of this repository on its stack: what a
// function costs with everything it calls (a caller and its callee both count the sample).
const inclusiveByOwnCode = new Map<string, number>()
for (const [nodeId, micros] of selfMicros) {
  const node = nodeById.get(nodeId)
  if (node === undefined || node.callFrame.functionName === '(idle)') continue
  const seen = new Set<string>()
  for (let frame: ProfileNode | undefined = node; frame !== undefined; frame = parentOf.get(frame.id)) {
    if (!/\/(src|bench)\//.test(frame.callFrame.url)) continue
    const name = `${frame.callFrame.functionName || '(anonymous)'} ${placeOf(frame.callFrame.url)}:${frame.callFrame.lineNumber + 1}`
    if (seen.has(name)) continue
    seen.add(name)
    inclusiveByOwnCode.set(name, (inclusiveByOwnCode.get(name) ?? 0) + micros)
  }
}

const share = (micros: number) => `${((micros / busy) * 100).toFixed(1).padStart(5)}%`
const print = (title: string, entries: Map<string, number>) => {
  console.log(`\n${title}`)
  for (const [name, micros] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${share(micros)}  ${name}`)
}
console.log(`busy ${(busy / 1e6).toFixed(2)} s (garbage collection ${share(garbageCollection)}), idle ${(idle / 1e6).toFixed(2)} s`)
print('self time by place', byPlace)
print('self time by function', byFunction)
print('time by nearest own frame (src/, bench/)', byOwnCode)
print('time including callees, by own function (src/, bench/)', inclusiveByOwnCode)
