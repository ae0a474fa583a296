/**
 * The server side of the core-flow benchmark, run as a child process by run.ts: Tollgate on the
 * storage named by BENCH_STORAGE, and beside it, in the same process, a bare Fastify route that
 * returns a constant (the baseline). Reports its ports and the bench site's keys over IPC and
 * cleans up when told to stop.
 */
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createKeyRing } from '../../src/secret.js'
import { openMemoryStore } from '../../src/storage/memory/memory-store.js'
import { migrate } from '../../src/storage/migrate.js'
import { openPgliteDatabase } from '../../src/storage/pglite/pglite-database.js'
import type { Storage } from '../../src/storage/ports.js'
import { openPostgresDatabase } from '../../src/storage/postgres/postgres-database.js'
import { openRedisStore } from '../../src/storage/redis/redis-store.js'

export interface BenchServerReady {
  type: 'ready'
  appPort: number
  baselinePort: number
  siteId: string
  siteKey: string
  secretKey: string
}

const storageKind = process.env.BENCH_STORAGE === 'real' ? 'real' : 'embedded'
const postgresUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const runId = `bench_${process.pid}`

async function openBenchStorage(): Promise<{ storage: Storage; cleanUp: () => Promise<void> }> {
  if (storageKind === 'embedded') {
    const directory = await mkdtemp(join(tmpdir(), 'tollgate-bench-'))
    const database = await openPgliteDatabase(directory)
    await migrate(database)
    return { storage: { database, keyValue: openMemoryStore() }, cleanUp: () => rm(directory, { recursive: true, force: true }) }
  }
  const database = await openPostgresDatabase({ connectionString: postgresUrl, schema: runId, maxConnections: 10 })
  await migrate(database)
  const keyValue = await openRedisStore({ url: redisUrl, keyPrefix: `${runId}:` })
  return {
    storage: { database, keyValue },
    async cleanUp() {
      const pg = await openPostgresDatabase({ connectionString: postgresUrl })
      await pg.execute(`DROP SCHEMA IF EXISTS ${runId} CASCADE`)
      await pg.close()
      const redis = new Redis(redisUrl)
      let cursor = '0'
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${runId}:*`, 'COUNT', 1000)
        cursor = next
        if (keys.length > 0) await redis.del(...keys)
      } while (cursor !== '0')
      redis.disconnect()
    },
  }
}

const config = loadConfig(process.env)
const { storage, cleanUp } = await openBenchStorage()
const app = await buildApp({ config, storage, keyRing: createKeyRing(config.secret ?? '') })
const { site, secretKey } = await app.sites.create({
  accountId: null,
  name: 'Benchmark site',
  // Low difficulty so that run.ts can pre-solve tens of thousands of challenges; the server's
  // cost of checking a solution (one SHA-256) does not depend on it. Thresholds above the top
  // score: the full risk model still runs on every submission, but every one takes the path that
  // issues a token, whatever the model thinks of a load generator.
  settings: { difficulty: 4, challengeLifetimeSeconds: 900, challengeThreshold: 101, blockThreshold: 101 },
})
// For reference: a constant inside Tollgate, behind everything every route shares (request ids,
// metrics, cookies, error handling), so that the report shows that cost apart from the flow's own.
// Like the baseline it reads and ignores any body.
await app.register(async (scope) => {
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined))
  scope.post('/bench/constant', async () => ({ status: 'ok' }))
  // And the floor of any route that needs the store: one read (a round trip to Redis).
  scope.post('/bench/store-read', async () => ({ status: (await app.keyValue.get('bench:probe')) ?? 'ok' }))
  // The price of work on this machine: the constant after a busy wait of the given microseconds,
  // standing in for any computation a route does, so that the report shows what ratio a route can
  // reach with that much work per request.
  scope.post<{ Params: { micros: string } }>('/bench/work/:micros', async (request) => {
    const until = performance.now() + Number(request.params.micros) / 1000
    while (performance.now() < until);
    return { status: 'ok' }
  })
})
await app.listen({ port: 0, host: '127.0.0.1' })

// The baseline: the least a Fastify route can do for the same requests. It reads whatever body
// comes (any content type, ignored) and returns a constant.
const baseline = Fastify({ logger: false })
baseline.removeAllContentTypeParsers()
baseline.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) => done(null, undefined))
baseline.post('/', async () => ({ status: 'ok' }))
await baseline.listen({ port: 0, host: '127.0.0.1' })

const portOf = (address: unknown) => (address as { port: number }).port
process.send?.({
  type: 'ready',
  appPort: portOf(app.server.address()),
  baselinePort: portOf(baseline.server.address()),
  siteId: site.id,
  siteKey: site.siteKey,
  secretKey,
} satisfies BenchServerReady)

// A V8 CPU profile of what run.ts measures (BENCH_CPU_PROF), without the start-up.
// The inspector session is opened on the first request only, so unprofiled runs go without it.
let profiler: Session | undefined
async function profileCommand(message: { type: 'profile-start' } | { type: 'profile-stop'; file: string }): Promise<void> {
  if (profiler === undefined) {
    profiler = new Session()
    profiler.connect()
  }
  if (message.type === 'profile-start') {
    await profiler.post('Profiler.enable')
    await profiler.post('Profiler.setSamplingInterval', { interval: 100 })
    await profiler.post('Profiler.start')
  } else {
    const { profile } = await profiler.post('Profiler.stop')
    await mkdir(dirname(message.file), { recursive: true })
    await writeFile(message.file, JSON.stringify(profile))
  }
  process.send?.({ type: message.type })
}

/**
 * CPU time of the event-loop thread alone, in microseconds (Linux: the thread's schedstat; its id
 * is the process's). The rest of the process's CPU goes to PGlite's worker, V8's garbage-collection
 * helpers and libuv's pool, which can run on the other core; this thread's share is what a route
 * can be limited by while the machine still has CPU to spare.
 */
function eventLoopThreadMicros(): number | undefined {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1000
  } catch {
    return undefined
  }
}

process.on('message', (message) => {
  // CPU time of this process, so that run.ts can report server CPU per request: with a client on
  // a neighbouring core, requests per second can be the client's limit; CPU per request is not.
  if (message === 'cpu-usage') {
    process.send?.({ type: 'cpu-usage', usage: { ...process.cpuUsage(), eventLoop: eventLoopThreadMicros() } })
    return
  }
  if (typeof message === 'object' && message !== null && 'type' in message) {
    void profileCommand(message as Parameters<typeof profileCommand>[0])
    return
  }
  if (message !== 'stop') return
  void (async () => {
    await baseline.close()
    await app.close()
    await cleanUp()
    process.exit(0)
  })()
})
