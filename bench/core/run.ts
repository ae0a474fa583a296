/**
 * The core-flow benchmark (issue 3): challenge issuing, verify with pre-solved challenges and
 * Siteverify, each against a bare Fastify route returning a constant measured in the same run,
 * on the embedded stores and on real PostgreSQL and Redis; then Redis memory per outstanding
 * challenge. A script, not a test: `npm run bench:core`. Figures go to bench/README.md.
 *
 * The server runs in a child process with NODE_ENV=production and LOG_LEVEL=silent (logging is
 * not what is measured), RATE_LIMIT_PER_MINUTE=0 unless BENCH_RATE_LIMIT says otherwise, and
 * TRUST_PROXY=true: this process drives the load and speaks for many simulated visitors, each
 * with its own address in X-Forwarded-For.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { solveChallenge } from '../../src/domain/proof-of-work/solve-challenge.js'
import { issueToken } from '../../src/domain/token/token.js'
import { createKeyRing } from '../../src/secret.js'
import {
  compareLoads, CONNECTIONS, measureLoad, type Comparison, type CpuMicros, type LoadOptions, type Measurement, type RequestVariant,
} from './measure.js'
import { isPortOpen } from '../shared.js'
import { measureRedisMemory } from './redis-memory.js'
import type { BenchServerReady } from './server.js'

const SECRET = 'benchmark-secret-with-at-least-thirty-two-characters'
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS_PER_ROUND = Number(process.env.BENCH_ROUND_SECONDS ?? 2)
/**
 * Pre-solved challenges for verify; each round's share must exceed what verify serves in a round
 * (a share used up is reused, and a replay counts as a failure): on the fast host verify reached
 * 9,900 a second, 19,800 of the 20,000 a round that 100,000 gave.
 */
const SINGLE_USE_AMOUNT = Number(process.env.BENCH_AMOUNT ?? 150_000)
/** Tokens for Siteverify: cheap to mint, and Siteverify is faster than verify (a round of 30,000 a second uses 60,000). */
const TOKEN_AMOUNT = Number(process.env.BENCH_TOKENS ?? 450_000)
const MEMORY_CHALLENGES = Number(process.env.BENCH_MEMORY_CHALLENGES ?? 100_000)
const postgresUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
/** BENCH_STORAGE=embedded|real and BENCH_SCENARIOS=challenge,verify measure a part only (for profiling). */
const onlyStorage = process.env.BENCH_STORAGE
const onlyScenarios = process.env.BENCH_SCENARIOS?.split(',')
/**
 * BENCH_CPU_PROF=<directory>: the server writes a V8 CPU profile of each measured scenario there,
 * <storage>-<scenario>.cpuprofile, of the route's last round (read it with bench/core/profile-summary.ts).
 */
const cpuProfileDirectory = process.env.BENCH_CPU_PROF

/** Reference rows: the constant in the app after this many microseconds of busy work per request. */
const WORK_MICROS = [10, 25, 50] as const
const targets = {
  'constant in the app': undefined,
  'constant after 10 µs of work': undefined,
  'constant after 25 µs of work': undefined,
  'constant after 50 µs of work': undefined,
  'one store read in the app': undefined,
  challenge: 0.6,
  verify: 0.4,
  siteverify: 0.5,
} as const
type Scenario = keyof typeof targets
const P99_TARGET_MS = 20

interface ScenarioResult extends Comparison {
  scenario: Scenario
}

/**
 * The headers of the SDK's fetch() from a Chrome page. A challenge request has no body, and the SDK
 * sends it without a Content-Type (sdk/src/api-client.ts); Chrome then says Content-Length: 0.
 */
const browserHeaders = (siteKey: string): Record<string, string> => ({
  'content-length': '0',
  'x-site-key': siteKey,
  origin: 'https://shop.example.com',
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'accept-language': 'en-GB,en;q=0.9',
})

/** A submission carries a JSON body (autocannon adds its Content-Length). */
const withJsonBody = (headers: Record<string, string>): Record<string, string> => {
  const { 'content-length': _bodyless, ...rest } = headers
  return { ...rest, 'content-type': 'application/json' }
}

/** The Node flags of `npm start` and `npm run serve` (package.json), so that the measured server runs as production does. */
function productionNodeFlags(): string[] {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { serve: string } }
  // The V8 flags (`--name=value`, `--name`); the script's own `--import tsx` is added below.
  return manifest.scripts.serve.split(/\s+/).filter((word) => /^--(?!import$)[\w-]+(=\S+)?$/.test(word))
}

async function startServer(storage: 'embedded' | 'real'): Promise<{ child: ChildProcess; ready: BenchServerReady }> {
  const child = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), {
    // BENCH_NODE_FLAGS adds flags (a profiler's, say) after the production ones.
    execArgv: [...productionNodeFlags(), ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), '--import', 'tsx'],
    env: {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
      RATE_LIMIT_PER_MINUTE: process.env.BENCH_RATE_LIMIT ?? '0',
      // The load generator speaks for many visitors through X-Forwarded-For.
      TRUST_PROXY: 'true',
      TOLLGATE_SECRET: SECRET,
      BENCH_STORAGE: storage,
      BENCH_DATABASE_URL: postgresUrl,
      BENCH_REDIS_URL: redisUrl,
    },
  })
  // Never leave the server behind, whatever happens here.
  process.once('exit', () => child.kill())
  const [ready] = (await once(child, 'message')) as [BenchServerReady]
  return { child, ready }
}

/** Sends the server a command over IPC and waits for its one-message answer. */
async function askServer<Answer>(child: ChildProcess, command: string | object): Promise<Answer> {
  child.send(command)
  const [answer] = (await once(child, 'message')) as [Answer]
  return answer
}

/** The server process's CPU time (user and system), in microseconds. */
async function readServerCpu(child: ChildProcess): Promise<CpuMicros> {
  const { usage } = await askServer<{ usage: NodeJS.CpuUsage }>(child, 'cpu-usage')
  return usage
}

async function stopServer(child: ChildProcess): Promise<void> {
  child.send('stop')
  await once(child, 'exit')
}

/**
 * Distinct client addresses (10.0.0.0/8, sent as X-Forwarded-For to a server that trusts it): each
 * simulated visitor asks for its challenge and submits it from its own address, as real traffic
 * does, so that per-client history (request rate, step-ups) sees visitors rather than one flood.
 */
function clientAddress(index: number): string {
  return `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`
}

function clientVariants(count: number, first: number): RequestVariant[] {
  return Array.from({ length: count }, (_, index) => ({ headers: { 'x-forwarded-for': clientAddress(first + index) } }))
}

/** A canvas hash of the visitor's own (20 hex digits, as the SDK reports one). */
const canvasOf = (address: string) => createHash('sha256').update(address).digest('hex').slice(0, 20)

/** Challenges issued over HTTP (by the measured route itself), one per client, then solved here. */
async function preSolveChallenges(url: string, headers: Record<string, string>, count: number): Promise<RequestVariant[]> {
  const solved: RequestVariant[] = []
  await measureLoad({
    url,
    headers,
    amount: count,
    variants: clientVariants(count, 1_000_000),
    onResponse: (status, body, variant) => {
      if (status !== 200 || variant?.headers === undefined) return
      const challenge = JSON.parse(body) as Challenge
      solved.push({
        headers: variant.headers,
        body: JSON.stringify({
          challengeId: challenge.challengeId,
          nonce: solveChallenge(challenge),
          solveTimeMs: 0,
          // Each visitor's own device: one fingerprint from thousands of addresses is a replay
          // (fingerprint_many_ips), which would add a write to every verification measured.
          fingerprint: { canvas: canvasOf(variant.headers['x-forwarded-for']!), webgl: 'ANGLE (Intel, Mesa Intel(R) UHD Graphics 620, OpenGL 4.6)' },
          behaviorData: { mouseMovements: 23, keystrokes: 7 },
        }),
      })
    },
  })
  return solved
}

/** Valid tokens minted with the server's key, as /api/v1/verify would have issued them. */
function mintTokenRedemptions(ready: BenchServerReady, count: number): RequestVariant[] {
  const tokenKey = createKeyRing(SECRET).keyFor('token')
  const issuedAt = Date.now()
  return Array.from({ length: count }, () => ({
    body: new URLSearchParams({
      secret: ready.secretKey,
      response: issueToken(tokenKey, {
        siteId: ready.siteId,
        siteKey: ready.siteKey,
        challengeId: randomUUID(),
        action: 'allow',
        riskScore: 0,
        anomalies: [],
        hostname: 'shop.example.com',
        countryCode: 'XX',
        issuedAt,
        dataEpoch: null,
        pageAction: null,
        cData: null,
        // A browser's submission describes its device: its token carries the device's ephemeral id.
        ephemeralId: randomBytes(12).toString('hex'),
        address: null,
      }),
      remoteip: '203.0.113.7',
    }).toString(),
  }))
}

/** Logs the first unexpected answer of a scenario, so that a failure count can be explained. */
function reportFirst(scenario: string): (body: string) => void {
  let reported = false
  return (body) => {
    if (reported) return
    reported = true
    process.stderr.write(`${scenario}: unexpected answer ${body}\n`)
  }
}

async function runStorage(storage: 'embedded' | 'real'): Promise<ScenarioResult[]> {
  const { child, ready } = await startServer(storage)
  try {
    const app = `http://127.0.0.1:${ready.appPort}`
    const baselineUrl = `http://127.0.0.1:${ready.baselinePort}/`
    const headers = browserHeaders(ready.siteKey)
    // Warm up both servers (JIT, connection pools) before anything is measured.
    const warmUpVisitors = clientVariants(100_000, 500_000)
    await measureLoad({ url: baselineUrl, headers, variants: warmUpVisitors, durationSeconds: 2 })
    await measureLoad({ url: `${app}/api/v1/challenge`, headers, variants: warmUpVisitors, durationSeconds: 2 })

    const cpu = () => readServerCpu(child)
    const results: ScenarioResult[] = []
    const measure = async (scenario: Scenario, load: () => LoadOptions | Promise<LoadOptions>) => {
      if (onlyScenarios !== undefined && !onlyScenarios.includes(scenario)) return
      const options = await load()
      const file = cpuProfileDirectory === undefined ? undefined : join(cpuProfileDirectory, `${storage}-${scenario.replaceAll(' ', '-')}.cpuprofile`)
      const profile = file === undefined
        ? undefined
        : {
            async start() {
              await askServer(child, { type: 'profile-start' })
            },
            async stop() {
              await askServer(child, { type: 'profile-stop', file })
              process.stderr.write(`CPU profile: ${file}\n`)
            },
          }
      results.push({ scenario, ...(await compareLoads(baselineUrl, options, ROUNDS, SECONDS_PER_ROUND, cpu, profile)) })
    }
    const visitors = clientVariants(200_000, 0)
    await measure('constant in the app', () => ({ url: `${app}/bench/constant`, headers, variants: visitors }))
    // What work costs does not depend on the stores: measured once, beside the embedded ones.
    if (storage === 'embedded') {
      for (const micros of WORK_MICROS) {
        await measure(`constant after ${micros} µs of work`, () => ({ url: `${app}/bench/work/${micros}`, headers, variants: visitors }))
      }
    }
    await measure('one store read in the app', () => ({ url: `${app}/bench/store-read`, headers, variants: visitors }))
    await measure('challenge', () => ({ url: `${app}/api/v1/challenge`, headers, variants: visitors }))

    // Verify is measured on the path that issues a token (allow); any other answer is a failure.
    await measure('verify', async () => {
      const unexpectedVerify = reportFirst('verify')
      return {
        url: `${app}/api/v1/verify`,
        headers: withJsonBody(headers),
        variants: await preSolveChallenges(`${app}/api/v1/challenge`, headers, SINGLE_USE_AMOUNT),
        isFailure: (body) => {
          const isAllow = body.includes('"action":"allow"')
          if (!isAllow) unexpectedVerify(body)
          return !isAllow
        },
      }
    })

    // A reused token (a round's share ran out) answers success: false: counted as a failure.
    await measure('siteverify', () => {
      const unexpectedSiteverify = reportFirst('siteverify')
      return {
        url: `${app}/turnstile/v0/siteverify`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        variants: mintTokenRedemptions(ready, TOKEN_AMOUNT),
        isFailure: (body) => {
          const isSuccess = body.includes('"success":true')
          if (!isSuccess) unexpectedSiteverify(body)
          return !isSuccess
        },
      }
    })
    return results
  } finally {
    await stopServer(child)
  }
}

function formatRow(storage: string, result: ScenarioResult): string {
  const ratio = result.route.requestsPerSecond / result.baseline.requestsPerSecond
  const target = targets[result.scenario]
  const meets = target === undefined ? '(reference)' : ratio >= target && result.route.p99Ms < P99_TARGET_MS && result.route.failures === 0 ? 'yes' : 'NO'
  const targetText = target === undefined ? '' : ` (>= ${target * 100}%)`
  const cpuOf = (measurement: Measurement) => `${measurement.cpuMicrosPerRequest ?? '?'} (${measurement.systemMicrosPerRequest ?? '?'})`
  const cpu = `${cpuOf(result.baseline)} / ${cpuOf(result.route)}`
  const eventLoop = `${result.baseline.eventLoopMicrosPerRequest ?? '?'} / ${result.route.eventLoopMicrosPerRequest ?? '?'}`
  return `| ${storage} | ${result.scenario} | ${result.baseline.requestsPerSecond} | ${result.route.requestsPerSecond} | ${(ratio * 100).toFixed(0)}%${targetText} | ${result.route.p50Ms} | ${result.route.p99Ms} | ${cpu} | ${eventLoop} | ${result.route.failures} | ${meets} |`
}

const hasRealServices = (await isPortOpen(postgresUrl, 5432)) && (await isPortOpen(redisUrl, 6379))
const rows: string[] = []
const storages = (hasRealServices ? (['embedded', 'real'] as const) : (['embedded'] as const)).filter((kind) => onlyStorage === undefined || kind === onlyStorage)
for (const storage of storages) {
  process.stderr.write(`measuring on ${storage} storage...\n`)
  const label = storage === 'real' ? 'PostgreSQL + Redis' : 'embedded (PGlite + memory)'
  for (const result of await runStorage(storage)) rows.push(formatRow(label, result))
}
if (!hasRealServices) process.stderr.write('PostgreSQL or Redis is not reachable: measured the embedded stores only\n')

console.log(
  `Core flow, ${new Date().toISOString()}, Node ${process.version}, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of baseline and route ` +
    `(${SECONDS_PER_ROUND} s each; ${SINGLE_USE_AMOUNT} pre-solved challenges and ${TOKEN_AMOUNT} tokens shared over the rounds); medians, worst p99\n`,
)
console.log('| Storage | Route | Baseline req/s | Route req/s | Ratio (target) | p50 ms | p99 ms | Server CPU µs/request (kernel), baseline / route | Event-loop thread µs/request, baseline / route | Failures | Meets targets |')
console.log('|---|---|---|---|---|---|---|---|---|---|---|')
for (const row of rows) console.log(row)

if (hasRealServices && onlyScenarios === undefined) {
  process.stderr.write(`measuring Redis memory over ${MEMORY_CHALLENGES} challenges...\n`)
  const memory = await measureRedisMemory(MEMORY_CHALLENGES, redisUrl)
  console.log(
    `\nRedis memory per outstanding challenge: ${memory.bytesPerChallenge} bytes (INFO used_memory delta over ${memory.challenges} challenges on a ${memory.server}; MEMORY USAGE of one key: ${memory.memoryUsageOfOneKey} bytes; target <= 256)`,
  )
}
