/**
 * The retention sweep on a large installation's log: many sites, one of them heavy, as the
 * walkthrough of 2026-12-01 found it (1,000 sites, 2,000,000 rows over 30 days, one site with 42%
 * of them). On PGlite, and on PostgreSQL when BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test) answers.
 *
 *   npm run bench:retention       (BENCH_RETENTION_ROWS=200000, BENCH_RETENTION_SITES=1000)
 *
 * The log is filled with SQL (INSERT ... SELECT, counted by the insert trigger), then swept site by
 * site in batches of 5,000 as LogRetention sweeps it, two ways in alternated rounds, each round
 * on rows of its own:
 * - before: the code before migration 041, every site visited with the DELETE that leaves the
 *   counting to the delete trigger's dynamic statement (migration 021's function, put back by
 *   CREATE OR REPLACE of that migration's own statement);
 * - now: deleteOldest as shipped (the statement counts its rows, migration 041's trigger only
 *   removes emptied counts), and only the sites with rows past the cutoff (listLoggedSites).
 * Two kinds of sweep: a band of 2.5 days (rows/s, the heavy site's and all sites'), and one hour
 * (the hourly sweep's steady state: a few rows of most sites, or none).
 */
import { readMigrations, splitStatements } from '../../src/storage/migrate.js'
import type { SqlDatabase } from '../../src/storage/ports.js'
import { createVerificationQueryRepository } from '../../src/storage/sql/verification-query-repository.js'
import { isPortOpen, median } from '../shared.js'
import { withBenchDatabase } from './database.js'
import { deleteOldestBefore041 } from './delete-oldest-before-041.js'

const ROWS = Number(process.env.BENCH_RETENTION_ROWS ?? 200_000)
const SITES = Number(process.env.BENCH_RETENTION_SITES ?? 1_000)
const BATCH_SIZE = 5_000
const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
const postgresUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** Site i's id: the heavy one is site 0. */
const siteIdOf = (index: number) => `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`

async function fill(database: SqlDatabase, now: number): Promise<void> {
  const heavy = Math.round(ROWS * 0.42)
  const light = Math.max(1, Math.round((ROWS - heavy) / (SITES - 1)))
  await database.query(
    `INSERT INTO verifications (id, site_id, challenge_id, created_at, action, risk_score, anomalies, country_code, client_ip, hostname, page_action, user_agent, difficulty, solve_time_ms)
     SELECT gen_random_uuid(), ('00000000-0000-4000-8000-' || lpad(to_hex(site), 12, '0'))::uuid, gen_random_uuid(),
            $1::timestamptz - random() * interval '30 days',
            (ARRAY['allow', 'allow', 'allow', 'allow', 'challenge', 'block', 'rejected'])[1 + n % 7],
            CASE WHEN n % 7 = 6 THEN NULL ELSE (n * 37) % 100 END,
            CASE WHEN n % 3 = 0 THEN ARRAY[(ARRAY['datacenter_ip', 'vpn_detected', 'no_interaction', 'headless_browser'])[1 + n % 4]] ELSE '{}' END,
            (ARRAY['US', 'DE', 'FR', 'GB', 'JP', 'BR', 'IN', 'NL', 'XX'])[1 + n % 9], '198.51.100.' || (n % 250), 'shop.example.com',
            (ARRAY['login', 'signup', 'checkout'])[1 + n % 3], 'Mozilla/5.0', 18, 400 + n % 900
       FROM generate_series(0, $2::int - 1) AS site CROSS JOIN LATERAL generate_series(1, CASE WHEN site = 0 THEN $3::int ELSE $4::int END) AS n`,
    [new Date(now), SITES, heavy, light],
  )
  await database.execute('ANALYZE')
}

/** The delete trigger's function of migration 021 (before) or 041 (now), by CREATE OR REPLACE of that migration's statement. */
async function useTrigger(database: SqlDatabase, version: 21 | 41): Promise<void> {
  const migration = (await readMigrations()).find((candidate) => candidate.version === version)
  const statement = splitStatements(migration?.sql ?? '').find((candidate) => candidate.startsWith('CREATE OR REPLACE FUNCTION verification_rollups_apply'))
  if (statement === undefined) throw new Error(`migration ${version} has no verification_rollups_apply`)
  await database.query(statement)
}

interface Sweep {
  rows: number
  heavyRows: number
  heavyMs: number
  ms: number
  statements: number
}

async function sweep(database: SqlDatabase, way: 'before' | 'now', cutoff: Date): Promise<Sweep> {
  const queries = createVerificationQueryRepository(database)
  await useTrigger(database, way === 'before' ? 21 : 41)
  const result: Sweep = { rows: 0, heavyRows: 0, heavyMs: 0, ms: 0, statements: 0 }
  const start = performance.now()
  const sites = await queries.listLoggedSites()
  for (const { siteId, oldestAt } of sites) {
    if (way === 'now' && oldestAt >= cutoff) continue
    const siteStart = performance.now()
    for (;;) {
      const count = way === 'before' ? await deleteOldestBefore041(database, siteId, BATCH_SIZE, cutoff) : await queries.deleteOldest(siteId, BATCH_SIZE, cutoff)
      result.statements++
      result.rows += count
      if (siteId === siteIdOf(0)) result.heavyRows += count
      if (count < BATCH_SIZE) break
    }
    if (siteId === siteIdOf(0)) result.heavyMs = performance.now() - siteStart
  }
  result.ms = performance.now() - start
  return result
}

async function runOn(kind: 'PGlite' | 'PostgreSQL'): Promise<void> {
  await withBenchDatabase(kind, 'retention', { postgresUrl, maxConnections: 2 }, async (database) => {
    const now = Date.now()
    const fillStart = performance.now()
    await fill(database, now)
    const [rollups] = await database.query<{ count: number }>('SELECT count(*)::int8 AS count FROM verification_rollups')
    process.stdout.write(
      `\n### ${kind}: ${ROWS.toLocaleString('en')} rows of ${SITES} sites over 30 days, ${rollups?.count.toLocaleString('en')} hourly counts (filled in ${((performance.now() - fillStart) / 1000).toFixed(0)} s)\n\n`,
    )
    // Bands of 2.5 days from the oldest on, alternated between the two ways (the order turning each round).
    const bands: Record<'before' | 'now', Sweep[]> = { before: [], now: [] }
    let cutoff = now - 30 * DAY_MS
    for (let round = 0; round < 4; round++) {
      for (const way of round % 2 === 0 ? (['before', 'now'] as const) : (['now', 'before'] as const)) {
        cutoff += 2.5 * DAY_MS
        bands[way].push(await sweep(database, way, new Date(cutoff)))
      }
    }
    // Then hourly sweeps, as in service: each moves the cutoff by one hour.
    const hours: Record<'before' | 'now', Sweep[]> = { before: [], now: [] }
    for (let round = 0; round < 6; round++) {
      for (const way of round % 2 === 0 ? (['before', 'now'] as const) : (['now', 'before'] as const)) {
        cutoff += HOUR_MS
        hours[way].push(await sweep(database, way, new Date(cutoff)))
      }
    }
    const rate = (sweeps: Sweep[], rows: (one: Sweep) => number, ms: (one: Sweep) => number) => median(sweeps.map((one) => (rows(one) * 1000) / ms(one)))
    const line = (what: string, before: number, now: number, unit: string) =>
      `| ${what} | ${before.toFixed(0)} ${unit} | ${now.toFixed(0)} ${unit} | ${(unit === 'ms' ? before / now : now / before).toFixed(1)}x |\n`
    process.stdout.write('| Medians | Before 041 | Now | Now faster by |\n|---|---|---|---|\n')
    process.stdout.write(line('2.5-day band, the heavy site', rate(bands.before, (one) => one.heavyRows, (one) => one.heavyMs), rate(bands.now, (one) => one.heavyRows, (one) => one.heavyMs), 'rows/s'))
    process.stdout.write(line('2.5-day band, all sites', rate(bands.before, (one) => one.rows, (one) => one.ms), rate(bands.now, (one) => one.rows, (one) => one.ms), 'rows/s'))
    process.stdout.write(line('hourly sweep', median(hours.before.map((one) => one.ms)), median(hours.now.map((one) => one.ms)), 'ms'))
    process.stdout.write(
      `\nHourly sweeps: ${median(hours.before.map((one) => one.rows))} rows in ${median(hours.before.map((one) => one.statements))} statements before, ` +
        `${median(hours.now.map((one) => one.rows))} in ${median(hours.now.map((one) => one.statements))} now (medians).\n`,
    )
  })
}

process.stdout.write(`Retention sweep at scale (${new Date().toISOString()}, Node ${process.version})\n`)
await runOn('PGlite')
if (await isPortOpen(postgresUrl, 5432)) await runOn('PostgreSQL')
else process.stdout.write(`\nPostgreSQL at ${postgresUrl} does not answer: measured on PGlite only.\n`)
