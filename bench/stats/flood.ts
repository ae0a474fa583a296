/**
 * The stats of a site flooded with made-up hostnames and page actions, before and after migration
 * 042 bounded them per hour. On PGlite, and on PostgreSQL when BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test) answers.
 *
 *   npm run bench:stats-flood      (BENCH_FLOOD_HOURS=23, BENCH_FLOOD_PER_HOUR=7200 by default)
 *
 * The flood: in each of the last BENCH_FLOOD_HOURS hours, BENCH_FLOOD_PER_HOUR scored
 * verifications (one address at its rate limit, 120 a minute), each from its own Origin
 * subdomain and with its own page action.
 * 1. Before: on a database migrated up to 041, the flood's rows counted by 041's trigger, a count
 *    per value; the stats route's six queries for the dashboard's 24 hours.
 * 2. Migration 042 applied (its time: it folds those hours into the bound), the same stats again.
 * 3. The same flood on another site through the log's writer as shipped (bounded as it counts):
 *    its write time per row, its counts and its stats.
 */
import { randomUUID } from 'node:crypto'
import type { StatsRange } from '../../src/domain/analytics/stats-range.js'
import { migrate } from '../../src/storage/migrate.js'
import type { SqlDatabase } from '../../src/storage/ports.js'
import { appendVerifications, verificationLoadOf, type VerificationLogEntry } from '../../src/storage/sql/verification-log-writer.js'
import { createVerificationQueryRepository } from '../../src/storage/sql/verification-query-repository.js'
import { isPortOpen, median } from '../shared.js'
import { withBenchDatabase } from './database.js'

const HOURS = Number(process.env.BENCH_FLOOD_HOURS ?? 23)
const PER_HOUR = Number(process.env.BENCH_FLOOD_PER_HOUR ?? 7_200)
const ROUNDS = 7
const BATCH_SIZE = 500
const HOUR_MS = 3_600_000
const postgresUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** The index-th verification of the flood: a new subdomain and page action each. */
function floodEntry(siteId: string, index: number, now: number): VerificationLogEntry {
  // The HOURS whole hours before the current one: the dashboard's 24 hours read them all from the counts.
  const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS - (HOURS - Math.floor(index / PER_HOUR)) * HOUR_MS
  return {
    siteId,
    challengeId: randomUUID(),
    createdAt: new Date(hourStart + Math.floor(((index % PER_HOUR) * HOUR_MS) / PER_HOUR)),
    action: index % 4 === 0 ? 'block' : 'allow',
    errorCode: null,
    riskScore: (index * 37) % 100,
    anomalies: index % 3 === 0 ? ['datacenter_ip'] : [],
    countryCode: 'NL',
    clientIp: '198.51.100.7',
    hostname: `x${index.toString(36)}.shop.example.com`,
    pageAction: `a${index.toString(36)}`,
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    difficulty: 18,
    solveTimeMs: 900,
    stepUps: 0,
    device: null,
    decidedBy: null,
  }
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await run()
  return performance.now() - start
}

/** Writes the flood for the site in batches, with `write`; the milliseconds it took. */
async function writeFlood(siteId: string, now: number, write: (rows: VerificationLogEntry[]) => Promise<void>): Promise<number> {
  return timed(async () => {
    for (let start = 0; start < HOURS * PER_HOUR; start += BATCH_SIZE) {
      const count = Math.min(BATCH_SIZE, HOURS * PER_HOUR - start)
      await write(Array.from({ length: count }, (_, offset) => floodEntry(siteId, start + offset, now)))
    }
  })
}

/** The site's hourly counts, and the stats route's six queries for the dashboard's 24 hours: the median of ROUNDS, in ms. */
async function measure(database: SqlDatabase, siteId: string, now: number): Promise<{ rollups: number; ms: number }> {
  await database.query('ANALYZE')
  const [row] = await database.query<{ count: number }>('SELECT count(*)::int8 AS count FROM verification_rollups WHERE site_id = $1', [siteId])
  const queries = createVerificationQueryRepository(database)
  const range: StatsRange = { from: new Date(Math.ceil((now + 1) / HOUR_MS) * HOUR_MS - 24 * HOUR_MS), to: new Date(now), interval: 'hour', endsNow: true }
  const stats = () =>
    Promise.all([
      queries.countByBucket(siteId, range),
      queries.topAnomalies(siteId, range, 10),
      queries.topCountries(siteId, range, 10),
      queries.topHostnames(siteId, range, 10),
      queries.topPageActions(siteId, range, 10),
      queries.countByScoreBucket(siteId, range),
    ])
  await stats()
  const times: number[] = []
  for (let round = 0; round < ROUNDS; round++) times.push(await timed(stats))
  return { rollups: row?.count ?? 0, ms: median(times) }
}

async function runOn(kind: 'PGlite' | 'PostgreSQL'): Promise<void> {
  await withBenchDatabase(kind, 'flood', { postgresUrl, maxConnections: 6, migratedBelow: 42 }, async (database) => {
    const now = Date.now()
    const rows = HOURS * PER_HOUR
    process.stdout.write(`\n### ${kind}: ${rows.toLocaleString('en')} scored verifications, ${PER_HOUR.toLocaleString('en')} an hour for ${HOURS} hours, each with its own hostname and page action\n\n`)
    process.stdout.write('| | Hourly counts of the site | Stats, 24 hours (six queries), ms | Writes, µs per row |\n|---|---|---|---|\n')
    const counted = randomUUID()
    // The log's writer of an earlier version, counted by 041's trigger (a count per value).
    const triggerWrite = await writeFlood(counted, now, (batch) => database.loadRows(verificationLoadOf(batch)))
    const before = await measure(database, counted, now)
    process.stdout.write(`| Before 042 (counted by 041's trigger) | ${before.rollups.toLocaleString('en')} | ${before.ms.toFixed(1)} | ${((triggerWrite * 1000) / rows).toFixed(1)} |\n`)
    const migration = await timed(() => migrate(database))
    const folded = await measure(database, counted, now)
    process.stdout.write(`| Folded by migration 042 (it took ${(migration / 1000).toFixed(2)} s) | ${folded.rollups.toLocaleString('en')} | ${folded.ms.toFixed(1)} | |\n`)
    const bounded = randomUUID()
    const writerWrite = await writeFlood(bounded, now, (batch) => appendVerifications(database, batch))
    const after = await measure(database, bounded, now)
    process.stdout.write(`| Written by the log's writer since 042 (bounded) | ${after.rollups.toLocaleString('en')} | ${after.ms.toFixed(1)} | ${((writerWrite * 1000) / rows).toFixed(1)} |\n`)
  })
}

process.stdout.write(`Stats of a flooded site (${new Date().toISOString()}, Node ${process.version})\n`)
await runOn('PGlite')
if (await isPortOpen(postgresUrl, 5432)) await runOn('PostgreSQL')
else process.stdout.write(`\nPostgreSQL at ${postgresUrl} does not answer: measured on PGlite only.\n`)
