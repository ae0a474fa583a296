/**
 * The dashboard's stats against the verification log's size, and what keeping the hourly rollups
 * costs the log's writes. On PGlite, and on PostgreSQL when BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test) answers.
 *
 *   npm run bench:stats            (BENCH_STATS_ROWS=1000000 rows by default)
 *
 * 1. Stats: one site's log filled with BENCH_STATS_ROWS verifications spread over 30 days, then
 *    the stats route's five queries (by bucket and action, top anomalies, countries and
 *    hostnames, the score distribution, run together as the route runs them) for the dashboard's
 *    three ranges, read from the rollups (the code as shipped) and, as the baselines in the same
 *    run, from the log's rows alone (the queries as they were before migration 007) and the three
 *    queries of the rollups before migration 017.
 * 2. Writes: the verification log's writes of 500-row batches as the plugin makes them (a bulk
 *    load, the counts added by the writer: migration 020) and, as the baselines, as it made them
 *    before 020 (an INSERT of fifteen parameter arrays, counted by the trigger of 017 and 019), and
 *    the bulk load alone (triggers disabled, nothing counted): time per row, and the CPU per row
 *    of this process's main thread, which in service is the one that answers requests (PGlite's
 *    work is in its worker thread, PostgreSQL's in its server).
 * 3. Retention: the sweep's DELETEs (5,000 rows each) of the rows 30 to 25 days old with the
 *    rollup triggers disabled (the baseline), of those 25 to 20 days old as before migration 041
 *    (counted by 021's trigger) and of those 20 to 15 days old as shipped (deleteOldest counts its
 *    rows). Last, since the baselines leave the rollups behind the log. One site only: for many
 *    sites, `npm run bench:retention` (bench/stats/retention.ts).
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { StatsRange } from '../../src/domain/analytics/stats-range.js'
import { intervalMs } from '../../src/domain/analytics/stats-range.js'
import type { VerificationLogEntry } from '../../src/plugins/verification-log.js'
import { readMigrations, splitStatements } from '../../src/storage/migrate.js'
import type { SqlDatabase } from '../../src/storage/ports.js'
import { createVerificationQueryRepository } from '../../src/storage/sql/verification-query-repository.js'
import { appendVerifications, verificationLoadOf } from '../../src/storage/sql/verification-log-writer.js'
import { isPortOpen, median } from '../shared.js'
import { withBenchDatabase } from './database.js'
import { deleteOldestBefore041 } from './delete-oldest-before-041.js'

const ROWS = Number(process.env.BENCH_STATS_ROWS ?? 1_000_000)
const ROUNDS = 5
const WRITE_BATCHES = 100
const BATCH_SIZE = 500
const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
const postgresUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

const actions = ['allow', 'allow', 'allow', 'allow', 'challenge', 'block', 'rejected'] as const
const labels = ['datacenter_ip', 'vpn_detected', 'no_interaction', 'headless_browser', 'missing_origin', 'fast_solve', 'high_request_rate']
const countries = ['US', 'DE', 'FR', 'GB', 'JP', 'BR', 'IN', 'NL', 'XX']
const hostnames = ['shop.example.com', 'www.shop.example.com', 'checkout.shop.example.com']
const pageActions = ['login', 'signup', 'checkout', null]

function entry(siteId: string, index: number, createdAt: Date): VerificationLogEntry {
  const action = actions[index % actions.length] ?? 'allow'
  return {
    siteId,
    challengeId: randomUUID(),
    createdAt,
    action,
    errorCode: action === 'rejected' ? 'solution_invalid' : null,
    riskScore: action === 'rejected' ? null : (index * 37) % 100,
    anomalies: index % 3 === 0 ? [labels[index % labels.length] ?? 'fast_solve'] : [],
    countryCode: countries[index % countries.length] ?? null,
    clientIp: `198.51.${(index >> 8) & 255}.${index & 255}`,
    hostname: index % 10 === 0 ? null : (hostnames[index % hostnames.length] ?? null),
    pageAction: pageActions[index % pageActions.length] ?? null,
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    difficulty: 18,
    solveTimeMs: 400 + (index % 900),
    stepUps: 0,
    // A scored verification names its device, one of a thousand.
    device: action === 'rejected' ? null : (index % 1000).toString(16).padStart(24, '0'),
    decidedBy: null,
  }
}

/** The stats queries as they read the log before the rollups (the baseline). */
function rawQueries(database: SqlDatabase) {
  const inRange = 'site_id = $1 AND created_at >= $2 AND created_at < $3'
  return (siteId: string, range: StatsRange) =>
    Promise.all([
      database.query(
        `SELECT (floor(extract(epoch FROM created_at) * 1000 / $4) * $4)::int8 AS bucket_ms, action, count(*)::int8 AS count
           FROM verifications WHERE ${inRange} GROUP BY 1, 2`,
        [siteId, range.from, range.to, intervalMs[range.interval]],
      ),
      database.query(
        `SELECT label, count(*)::int8 AS count FROM verifications CROSS JOIN LATERAL unnest(anomalies) AS label
          WHERE ${inRange} GROUP BY label ORDER BY count DESC, label LIMIT 10`,
        [siteId, range.from, range.to],
      ),
      database.query(
        `SELECT country_code AS label, count(*)::int8 AS count FROM verifications
          WHERE ${inRange} AND country_code IS NOT NULL GROUP BY country_code ORDER BY count DESC, country_code LIMIT 10`,
        [siteId, range.from, range.to],
      ),
      database.query(
        `SELECT hostname AS label, count(*)::int8 AS count FROM verifications
          WHERE ${inRange} AND hostname IS NOT NULL GROUP BY hostname ORDER BY count DESC, hostname LIMIT 10`,
        [siteId, range.from, range.to],
      ),
      database.query(
        `SELECT verification_score_bucket(risk_score) AS label, count(*)::int8 AS count FROM verifications
          WHERE ${inRange} AND risk_score IS NOT NULL GROUP BY 1`,
        [siteId, range.from, range.to],
      ),
    ])
}

/** The route's queries from the rollups: the three before migration 017, or the five since. */
function rolledUpQueries(database: SqlDatabase, since017: boolean) {
  const queries = createVerificationQueryRepository(database)
  return (siteId: string, range: StatsRange) =>
    Promise.all([
      queries.countByBucket(siteId, range),
      queries.topAnomalies(siteId, range, 10),
      queries.topCountries(siteId, range, 10),
      ...(since017 ? [queries.topHostnames(siteId, range, 10), queries.countByScoreBucket(siteId, range)] : []),
    ])
}

type TriggerVersion = 'none' | '007' | '017' | '020' | '021' | '041'

/**
 * Puts the rollup triggers' functions of that migration in place (CREATE OR REPLACE of its own
 * statements, over those of the migrations before it), or disables the triggers: the before and
 * after of a migration in one database.
 */
async function useTriggers(database: SqlDatabase, version: TriggerVersion): Promise<void> {
  if (version === 'none') {
    await database.query('ALTER TABLE verifications DISABLE TRIGGER USER')
    return
  }
  const migrations = (await readMigrations()).filter((candidate) => candidate.version <= Number(version))
  for (const migration of migrations) {
    const functions = splitStatements(migration.sql).filter((statement) => /^CREATE (OR REPLACE )?FUNCTION verification_rollups_/.test(statement))
    for (const statement of functions) await database.query(statement.replace(/^CREATE (OR REPLACE )?FUNCTION/, 'CREATE OR REPLACE FUNCTION'))
  }
  await database.query('ALTER TABLE verifications ENABLE TRIGGER USER')
}

/** The log's write before migration 020: one INSERT of fifteen parameter arrays, its rows counted by the trigger. */
async function insertCountedByTrigger(database: SqlDatabase, rows: readonly VerificationLogEntry[]): Promise<void> {
  const column = <T>(read: (row: VerificationLogEntry) => T): T[] => rows.map(read)
  await database.query(
    `INSERT INTO verifications (id, site_id, challenge_id, created_at, action, error_code, risk_score, anomalies,
       country_code, client_ip, hostname, user_agent, difficulty, solve_time_ms, step_ups)
     SELECT id, site_id, challenge_id, created_at, action, error_code, risk_score,
       string_to_array(anomalies, ','), country_code, client_ip, hostname, user_agent, difficulty, solve_time_ms, step_ups
     FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::timestamptz[], $5::text[], $6::text[], $7::smallint[], $8::text[],
       $9::text[], $10::text[], $11::text[], $12::text[], $13::smallint[], $14::integer[], $15::smallint[])
       AS batch (id, site_id, challenge_id, created_at, action, error_code, risk_score, anomalies,
         country_code, client_ip, hostname, user_agent, difficulty, solve_time_ms, step_ups)
     ON CONFLICT (id) DO NOTHING`,
    [
      rows.map(() => randomUUID()),
      column((row) => row.siteId),
      column((row) => row.challengeId),
      column((row) => row.createdAt.toISOString()),
      column((row) => row.action),
      column((row) => row.errorCode),
      column((row) => row.riskScore),
      column((row) => row.anomalies.join(',')),
      column((row) => row.countryCode),
      column((row) => row.clientIp),
      column((row) => row.hostname),
      column((row) => row.userAgent),
      column((row) => row.difficulty),
      column((row) => row.solveTimeMs),
      column((row) => row.stepUps),
    ],
  )
}

/** CPU time of the thread that answers requests in service (this process's main thread), in µs (Linux). */
function eventLoopThreadMicros(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1000
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await run()
  return performance.now() - start
}

/** The dashboard's ranges, as it asks for them (dashboard/src/lib/time-range.ts): ending at the end of the current bucket. */
function dashboardRanges(now: number): [string, StatsRange][] {
  const hourEnd = Math.ceil((now + 1) / HOUR_MS) * HOUR_MS
  const dayEnd = Math.ceil((now + 1) / DAY_MS) * DAY_MS
  return [
    ['24 hours, hourly', { from: new Date(hourEnd - 24 * HOUR_MS), to: new Date(hourEnd), interval: 'hour' }],
    ['7 days, hourly', { from: new Date(hourEnd - 7 * DAY_MS), to: new Date(hourEnd), interval: 'hour' }],
    ['30 days, daily', { from: new Date(dayEnd - 30 * DAY_MS), to: new Date(dayEnd), interval: 'day' }],
  ]
}

async function fill(database: SqlDatabase, siteId: string, now: number): Promise<void> {
  for (let start = 0; start < ROWS; start += 10_000) {
    const count = Math.min(10_000, ROWS - start)
    await appendVerifications(
      database,
      Array.from({ length: count }, (_, offset) => {
        const index = start + offset
        return entry(siteId, index, new Date(now - Math.floor((index / ROWS) * 30 * DAY_MS)))
      }),
    )
  }
  await database.query('ANALYZE')
}

async function measureStats(database: SqlDatabase, siteId: string, now: number): Promise<string[]> {
  const raw = rawQueries(database)
  const before017 = rolledUpQueries(database, false)
  const rolledUp = rolledUpQueries(database, true)
  const lines: string[] = []
  for (const [name, range] of dashboardRanges(now)) {
    const rawTimes: number[] = []
    const before017Times: number[] = []
    const rolledUpTimes: number[] = []
    await rolledUp(siteId, range)
    await before017(siteId, range)
    await raw(siteId, range)
    for (let round = 0; round < ROUNDS; round++) {
      rolledUpTimes.push(await timed(() => rolledUp(siteId, range)))
      before017Times.push(await timed(() => before017(siteId, range)))
      rawTimes.push(await timed(() => raw(siteId, range)))
    }
    const [fromLog, threeQueries, fromRollups] = [median(rawTimes), median(before017Times), median(rolledUpTimes)]
    lines.push(
      `| ${name} | ${fromLog.toFixed(0)} | ${threeQueries.toFixed(1)} | ${fromRollups.toFixed(1)} | ${(fromLog / fromRollups).toFixed(0)}x faster | ${(fromRollups / threeQueries).toFixed(2)}x |`,
    )
  }
  return lines
}

type WriteVersion = 'bulk load alone' | 'before 020' | 'writer'

async function measureWrites(database: SqlDatabase): Promise<string> {
  const siteId = randomUUID()
  const batches = (offset: number) =>
    Array.from({ length: WRITE_BATCHES }, (_, batch) =>
      Array.from({ length: BATCH_SIZE }, (_, row) => entry(siteId, offset + batch * BATCH_SIZE + row, new Date())),
    )
  const write = {
    'bulk load alone': (rows: VerificationLogEntry[]) => database.loadRows(verificationLoadOf(rows)),
    'before 020': (rows: VerificationLogEntry[]) => insertCountedByTrigger(database, rows),
    writer: (rows: VerificationLogEntry[]) => appendVerifications(database, rows),
  } satisfies Record<WriteVersion, (rows: VerificationLogEntry[]) => Promise<void>>
  const versions = Object.keys(write) as WriteVersion[]
  const times = new Map<WriteVersion, number[]>(versions.map((version) => [version, []]))
  const loopTimes = new Map<WriteVersion, number[]>(versions.map((version) => [version, []]))
  for (let round = 0; round < ROUNDS; round++) {
    // Alternated, in an order that turns each round, each on fresh rows of the current hour, as the log writes them.
    for (let turn = 0; turn < versions.length; turn++) {
      const version = versions[(round + turn) % versions.length] ?? 'writer'
      await useTriggers(database, version === 'bulk load alone' ? 'none' : '020')
      const offset = (round * versions.length + turn) * WRITE_BATCHES * BATCH_SIZE
      const rows = batches(offset)
      const loopBefore = eventLoopThreadMicros()
      times.get(version)?.push(await timed(async () => { for (const batch of rows) await write[version](batch) }))
      loopTimes.get(version)?.push((eventLoopThreadMicros() - loopBefore) / 1000)
    }
  }
  await useTriggers(database, '020')
  const perRow = (measured: Map<WriteVersion, number[]>) => (version: WriteVersion) => (median(measured.get(version) ?? []) * 1000) / (WRITE_BATCHES * BATCH_SIZE)
  const row = (what: string, measured: Map<WriteVersion, number[]>) => {
    const [before, writer, alone] = (['before 020', 'writer', 'bulk load alone'] as const).map(perRow(measured)) as [number, number, number]
    return `| ${what} | ${before.toFixed(1)} | ${writer.toFixed(1)} | ${alone.toFixed(1)} | ${(before / writer).toFixed(2)}x | ${(writer / alone).toFixed(2)}x |`
  }
  return `${row('elapsed', times)}\n${row('event-loop thread CPU', loopTimes)}`
}

/**
 * Rows per second of the retention sweep's deletes: without the triggers (the old statement, the
 * baseline), counted by 021's trigger (the old statement: before 041) and as shipped (deleteOldest,
 * which counts its rows itself, and 041's trigger).
 */
async function measureRetention(database: SqlDatabase, siteId: string, now: number): Promise<string> {
  const queries = createVerificationQueryRepository(database)
  const sweep = async (cutoff: number, deleteBatch: (cutoff: Date) => Promise<number>) => {
    let deleted = 0
    const milliseconds = await timed(async () => {
      for (;;) {
        const count = await deleteBatch(new Date(cutoff))
        deleted += count
        if (count < 5_000) break
      }
    })
    return (deleted * 1000) / milliseconds
  }
  const before041 = (cutoff: Date) => deleteOldestBefore041(database, siteId, 5_000, cutoff)
  await useTriggers(database, 'none')
  const plain = await sweep(now - 25 * DAY_MS, before041)
  await useTriggers(database, '021')
  const before = await sweep(now - 20 * DAY_MS, before041)
  await useTriggers(database, '041')
  const after = await sweep(now - 15 * DAY_MS, (cutoff) => queries.deleteOldest(siteId, 5_000, cutoff))
  return `| ${plain.toFixed(0)} | ${before.toFixed(0)} | ${after.toFixed(0)} | ${(plain / before).toFixed(2)}x | ${(plain / after).toFixed(2)}x | ${(before / after).toFixed(2)}x |`
}

async function runOn(kind: 'PGlite' | 'PostgreSQL'): Promise<void> {
  await withBenchDatabase(kind, 'stats', { postgresUrl, maxConnections: 5 }, async (database) => {
    const siteId = randomUUID()
    const now = Date.now()
    const fillTime = await timed(() => fill(database, siteId, now))
    process.stdout.write(`\n### ${kind}: ${ROWS.toLocaleString('en')} rows of one site over 30 days (filled in ${(fillTime / 1000).toFixed(0)} s)\n\n`)
    process.stdout.write('| Range | From the log, ms (baseline) | From the rollups before 017 (three queries), ms | From the rollups, ms | Ratio to the log | Ratio to before 017 |\n|---|---|---|---|---|---|\n')
    for (const line of await measureStats(database, siteId, now)) process.stdout.write(`${line}\n`)
    process.stdout.write(`\nWrites of the log in batches of ${BATCH_SIZE}, ${WRITE_BATCHES} batches per round, median of ${ROUNDS} alternated rounds:\n\n`)
    process.stdout.write('| µs per row | before 020 (INSERT, counted by the trigger; baseline) | as written now (bulk load, counted by the writer) | the bulk load alone (nothing counted) | Now cheaper by | Counting costs |\n|---|---|---|---|---|---|\n')
    process.stdout.write(`${await measureWrites(database)}\n`)
    process.stdout.write(`\nRetention: deletes of 5,000 rows per statement, about ${Math.round(ROWS / 6).toLocaleString('en')} rows each way:\n\n`)
    process.stdout.write('| Rows/s without the rollup triggers | counted by 021\'s trigger (before 041) | counted by the statement (041) | Time per row, 021 / none | 041 / none | 041 / 021 |\n|---|---|---|---|---|---|\n')
    process.stdout.write(`${await measureRetention(database, siteId, now)}\n`)
  })
}

process.stdout.write(`Stats and the verification log (${new Date().toISOString()}, Node ${process.version})\n`)
await runOn('PGlite')
if (await isPortOpen(postgresUrl, 5432)) await runOn('PostgreSQL')
else process.stdout.write(`\nPostgreSQL at ${postgresUrl} does not answer: measured on PGlite only.\n`)
