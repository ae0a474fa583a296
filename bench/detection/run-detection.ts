/**
 * npm run eval:detection [-- --people 20 --scripted 200 --automated 40 --informational 10 --forgery 10 --stealth-patched 10]
 *
 * The detection evaluation (bench/README.md, "Detection"): starts Tollgate as in production
 * (PostgreSQL, Redis, behind a proxy it trusts) and drives labelled sessions of real clients on
 * this machine against the demo page, then reads every verdict from the verification log and
 * prints the confusion table. Sessions of all classes run interleaved in random order, each from
 * its own client address (see session-proxy.ts).
 *
 * Needs: PostgreSQL on 127.0.0.1 (database `postgres`-reachable), redis-server on PATH (a private
 * one is started; or EVAL_REDIS_URL names a Redis database the run may flush), /usr/bin/chromium,
 * Xvfb, xdotool and curl (apt-get install chromium xvfb xdotool curl redis-server).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import pg from 'pg'
import { runAutomationSession, type AutomationVariant } from './browser-automation.js'
import { renderLabels, renderTable, summarize, type SessionClass, type SessionRecord } from './collect-outcomes.js'
import { runPersonSession } from './people-driver.js'
import { runCarefulForgerySession, runScriptedSession, scriptedVariants, type ScriptedVariant } from './scripted-clients.js'
import { startSessionProxy } from './session-proxy.js'
import { startXvfb } from './x-display.js'
import { freePort, startPrivateRedis } from '../shared.js'

const root = new URL('../../', import.meta.url).pathname
const POSTGRES = process.env.EVAL_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432'
/** A Redis of the caller's to use (and flush at the start); by default a private redis-server. */
const EVAL_REDIS_URL = process.env.EVAL_REDIS_URL
const DATABASE = 'tollgate_detection_eval'
const DEMO_SITE_ID = '00000000-0000-4000-8000-00000000de30'

const { values: options } = parseArgs({
  options: {
    people: { type: 'string', default: '20' },
    scripted: { type: 'string', default: '200' },
    automated: { type: 'string', default: '40' },
    informational: { type: 'string', default: '10' },
    forgery: { type: 'string', default: '10' },
    'stealth-patched': { type: 'string', default: '10' },
  },
})

function requireTools(): void {
  const missing = ['Xvfb', 'xdotool', 'curl', 'chromium'].filter((tool) => {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' })
      return false
    } catch {
      return true
    }
  })
  if (missing.length > 0) throw new Error(`missing tools: ${missing.join(', ')} (apt-get install chromium xvfb xdotool curl)`)
  if (!existsSync(join(root, 'dist/sdk/tollgate.js'))) execFileSync('npm', ['run', 'build:sdk'], { cwd: root, stdio: 'inherit' })
}

async function recreateDatabase(): Promise<void> {
  const client = new pg.Client({ connectionString: `${POSTGRES}/postgres` })
  await client.connect()
  try {
    await client.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`)
    await client.query(`CREATE DATABASE ${DATABASE}`)
  } finally {
    await client.end()
  }
}

async function startService(port: number, dataDirectory: string, redisUrl: string): Promise<ChildProcess> {
  const service = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      TRUST_PROXY: '127.0.0.1',
      DATA_DIR: dataDirectory,
      DATABASE_URL: `${POSTGRES}/${DATABASE}`,
      REDIS_URL: redisUrl,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const deadline = Date.now() + 60_000
  for (;;) {
    if (service.exitCode !== null) throw new Error('the service exited at start')
    const isUp = await fetch(`http://127.0.0.1:${port}/health`).then((response) => response.ok, () => false)
    if (isUp) return service
    if (Date.now() > deadline) throw new Error('the service did not start within a minute')
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
}

async function stopService(service: ChildProcess): Promise<void> {
  if (service.exitCode !== null) return
  await new Promise<void>((resolve) => {
    service.once('exit', () => resolve())
    service.kill('SIGTERM')
  })
}

/**
 * All sessions run on one machine with one browser build, so every session of a class has the
 * same device fingerprint: the fingerprint-spread history would see one device from a hundred
 * addresses, which real visitors never produce. It is cleared between sessions; the per-address
 * history (rate, recent blocks) is kept.
 */
async function clearFingerprintHistory(redis: Redis): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', 'tollgate:history:*:fp:*', 'COUNT', 1000)
    cursor = next
    if (keys.length > 0) await redis.del(...keys)
  } while (cursor !== '0')
}

interface PlannedSession {
  class: SessionClass
  variant: string
  run(baseUrl: string): Promise<unknown>
}

function plan(display: string): PlannedSession[] {
  const sessions: PlannedSession[] = []
  const count = (value: string | undefined) => Number(value ?? 0)
  for (let i = 0; i < count(options.people); i++) {
    sessions.push({ class: 'people', variant: 'Chromium window, xdotool input', run: (url) => runPersonSession(display, `${url}/demo`) })
  }
  for (let i = 0; i < count(options.scripted); i++) {
    const variant = scriptedVariants[i % scriptedVariants.length] as ScriptedVariant
    sessions.push({ class: 'scripted', variant, run: (url) => runScriptedSession(variant, url) })
  }
  const automated: AutomationVariant[] = ['headless-default', 'playwright-headed']
  for (let i = 0; i < count(options.automated); i++) {
    const variant = automated[i % automated.length] as AutomationVariant
    sessions.push({ class: 'automated', variant, run: (url) => runAutomationSession(variant, url, display) })
  }
  for (let i = 0; i < count(options.informational); i++) {
    sessions.push({ class: 'informational', variant: 'headless-stealth', run: (url) => runAutomationSession('headless-stealth', url, display) })
  }
  // Outside the targets: what docs/risk.md ("Limits") says imitations get, measured.
  for (let i = 0; i < count(options.forgery); i++) {
    sessions.push({ class: 'forgery', variant: 'careful-forgery', run: (url) => runCarefulForgerySession(url) })
  }
  for (let i = 0; i < count(options['stealth-patched']); i++) {
    sessions.push({ class: 'stealth-patched', variant: 'headless-stealth-patched', run: (url) => runAutomationSession('headless-stealth-patched', url, display) })
  }
  // Interleaved in random order, so that no class runs in a quieter or busier moment than another.
  for (let i = sessions.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[sessions[i], sessions[j]] = [sessions[j] as PlannedSession, sessions[i] as PlannedSession]
  }
  return sessions
}

/** Session n's client address: distinct per session, in a home-broadband range (Deutsche Telekom, AS3320). */
function clientAddressOf(index: number): string {
  return `80.187.${Math.floor(index / 250) + 100}.${(index % 250) + 1}`
}

async function readVerifications(): Promise<Map<string, SessionRecord['verifications']>> {
  const client = new pg.Client({ connectionString: `${POSTGRES}/${DATABASE}` })
  await client.connect()
  try {
    const { rows } = await client.query<{ client_ip: string; action: string; risk_score: number | null; anomalies: string[] }>(
      'SELECT client_ip, action, risk_score, anomalies FROM verifications WHERE site_id = $1 ORDER BY created_at, id',
      [DEMO_SITE_ID],
    )
    const bySession = new Map<string, SessionRecord['verifications']>()
    for (const row of rows) {
      const list = bySession.get(row.client_ip) ?? []
      list.push({ action: row.action, riskScore: row.risk_score, anomalies: row.anomalies })
      bySession.set(row.client_ip, list)
    }
    return bySession
  } finally {
    await client.end()
  }
}

requireTools()
await recreateDatabase()
// Its own redis-server unless told otherwise: the run starts from an empty Redis, and must not
// flush one that holds anybody else's keys.
const privateRedis = EVAL_REDIS_URL === undefined ? await startPrivateRedis() : undefined
if (EVAL_REDIS_URL === undefined && privateRedis === undefined) throw new Error('redis-server did not start; install it (apt-get install redis-server) or set EVAL_REDIS_URL to a Redis database this run may flush')
// Ended with the script however it ends (a step below may throw before the try).
process.on('exit', () => privateRedis?.process.kill())
const redisUrl = EVAL_REDIS_URL ?? privateRedis!.url
const redis = new Redis(redisUrl)
await redis.flushdb()
const dataDirectory = await mkdtemp(join(tmpdir(), 'tollgate-eval-data-'))
const port = await freePort()
const service = await startService(port, dataDirectory, redisUrl)
const display = await startXvfb()
const records: SessionRecord[] = []
const startedAt = Date.now()
try {
  const sessions = plan(display.name)
  for (const [index, session] of sessions.entries()) {
    const clientIp = clientAddressOf(index)
    const proxy = await startSessionProxy(port, clientIp)
    const record: SessionRecord = { class: session.class, variant: session.variant, clientIp, verifications: [] }
    try {
      await session.run(proxy.url)
    } catch (error) {
      record.error = error instanceof Error ? error.message : String(error)
    } finally {
      await proxy.close()
    }
    records.push(record)
    await clearFingerprintHistory(redis)
    if ((index + 1) % 10 === 0) console.log(`${index + 1}/${sessions.length} sessions (${Math.round((Date.now() - startedAt) / 1000)} s)`)
  }
} finally {
  await display.close()
  await stopService(service)
  redis.disconnect()
  await rm(dataDirectory, { recursive: true, force: true })
}

const verifications = await readVerifications()
for (const record of records) record.verifications = verifications.get(record.clientIp) ?? []

const groupsOf = (select: (record: SessionRecord) => boolean, name: string) => ({ name, summary: summarize(records.filter(select)) })
const groups = [
  groupsOf((r) => r.class === 'people', 'People (Chromium window under Xvfb, xdotool input)'),
  groupsOf((r) => r.class === 'scripted', 'Scripted HTTP clients (all)'),
  ...scriptedVariants.map((variant) => groupsOf((r) => r.variant === variant, `- scripted: ${variant}`)),
  groupsOf((r) => r.class === 'automated', 'Headless / automated browsers (all)'),
  groupsOf((r) => r.variant === 'headless-default', '- Playwright headless, default settings'),
  groupsOf((r) => r.variant === 'playwright-headed', '- Playwright headed under Xvfb, human-paced input'),
  groupsOf((r) => r.class === 'informational', 'Informational: headless with evasions (UA override, AutomationControlled off)'),
  groupsOf((r) => r.class === 'stealth-patched', 'Not in the targets: headless with evasions and init-script patches (webdriver getter, WebGL vendor/renderer)'),
  groupsOf((r) => r.class === 'forgery', 'Not in the targets: careful forgery (no browser; Chrome headers and client hints, a copied real fingerprint, SDK-layout nonce, true solve time)'),
]
const [people, scripted, automated] = [groups[0]?.summary, groups[1]?.summary, groups[6]?.summary]
const targets = [
  { name: 'scripted HTTP clients blocked (final verdict block) >= 99%', value: scripted === undefined ? 0 : scripted.finalBlock / Math.max(1, scripted.sessions), goal: 0.99, isAtLeast: true },
  { name: 'headless/automated browsers challenged or blocked >= 95%', value: automated === undefined ? 0 : automated.everNotAllowed / Math.max(1, automated.sessions), goal: 0.95, isAtLeast: true },
  { name: 'people anything but allow <= 1%', value: people === undefined ? 1 : (people.everNotAllowed + people.noVerdict) / Math.max(1, people.sessions), goal: 0.01, isAtLeast: false },
]
const errors = records.filter((record) => record.error !== undefined)
const report = [
  `Detection evaluation, ${new Date().toISOString()}, ${records.length} sessions in ${Math.round((Date.now() - startedAt) / 1000)} s`,
  '',
  renderTable(groups),
  '',
  'Targets (they cover the classes above them: the rows "Not in the targets" and the informational one are imitations docs/risk.md, "Limits", says can pass):',
  ...targets.map((target) => `- ${target.name}: ${(100 * target.value).toFixed(1)}% ${(target.isAtLeast ? target.value >= target.goal : target.value <= target.goal) ? 'MET' : 'MISSED'}`),
  '',
  'Labels on the first verification of each session:',
  renderLabels(groups),
  ...(errors.length === 0 ? [] : ['', `Session errors (${errors.length}):`, ...errors.slice(0, 20).map((record) => `- ${record.variant} ${record.clientIp}: ${record.error ?? ''}`)]),
].join('\n')
console.log(`\n${report}`)
await writeFile(join(root, 'bench/detection/last-run.md'), `${report}\n`)
await writeFile(join(root, 'bench/detection/last-run.json'), `${JSON.stringify(records, null, 2)}\n`)
