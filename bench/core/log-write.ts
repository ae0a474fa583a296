/**
 * What writing the verification log costs per row on the embedded database (PGlite in its worker
 * thread), by index: the log's writer (appendVerifications) loads batches of 500 rows, as verify
 * fills them, into a fresh database with all of the table's indexes, with each secondary index
 * left out in turn, and with none. Each is measured in the same run, after 20,000 rows of
 * warm-up, as wall time and as the process's CPU (both threads) per row; the ratio is against
 * the table as migrated. Rounds alternate between the variants; figures are medians.
 *
 *   npx tsx bench/core/log-write.ts [rows per round, 25000 by default]
 */
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate } from '../../src/storage/migrate.js'
import { openPgliteDatabase } from '../../src/storage/pglite/pglite-database.js'
import type { SqlDatabase } from '../../src/storage/ports.js'
import { appendVerifications, type VerificationLogEntry } from '../../src/storage/sql/verification-log-writer.js'

const BATCH = 500
const ROUNDS = 3
const WARM_UP_ROWS = 20_000
const rowsPerRound = Number(process.argv[2] ?? 25_000)

const SECONDARY_INDEXES = [
  'verifications_site_time',
  'verifications_site_action_time',
  'verifications_site_device_time',
  'verifications_site_challenge',
  'verifications_site_decided_time',
  'verifications_site_labeled',
]

const variants: { name: string; dropped: string[] }[] = [
  { name: 'as migrated (every index)', dropped: [] },
  ...SECONDARY_INDEXES.map((index) => ({ name: `without ${index}`, dropped: [index] })),
  { name: 'primary key only', dropped: SECONDARY_INDEXES },
]

const userAgent = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'

/** A batch of rows as verify logs them: allowed, scored, with a device, one site, distinct visitors. */
function batchOf(siteId: string): VerificationLogEntry[] {
  return Array.from({ length: BATCH }, (_, index) => ({
    siteId,
    challengeId: randomUUID(),
    createdAt: new Date(),
    action: 'allow',
    errorCode: null,
    riskScore: 12,
    anomalies: ['webgl_missing'],
    countryCode: 'DE',
    clientIp: `10.${index % 200}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`,
    hostname: 'shop.example.com',
    pageAction: null,
    userAgent,
    difficulty: 18,
    solveTimeMs: 900,
    stepUps: 0,
    device: randomUUID().replaceAll('-', '').slice(0, 24),
    decidedBy: null,
  }))
}

interface Opened {
  database: SqlDatabase
  siteId: string
  directory: string
}

async function open(dropped: readonly string[]): Promise<Opened> {
  const directory = await mkdtemp(join(tmpdir(), 'tollgate-log-write-'))
  const database = await openPgliteDatabase(directory)
  await migrate(database)
  const siteId = randomUUID()
  await database.execute(`INSERT INTO sites (id, name, site_key, secret_key_hash) VALUES ('${siteId}', 'bench', 'tgk_bench', 'unused')`)
  for (const index of dropped) await database.execute(`DROP INDEX ${index}`)
  for (let written = 0; written < WARM_UP_ROWS; written += BATCH) await appendVerifications(database, batchOf(siteId))
  return { database, siteId, directory }
}

/** Microseconds per row, wall and CPU (every thread of the process), over one round. */
async function measureRound({ database, siteId }: Opened): Promise<{ wall: number; cpu: number }> {
  const batches = Array.from({ length: Math.ceil(rowsPerRound / BATCH) }, () => batchOf(siteId))
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  for (const batch of batches) await appendVerifications(database, batch)
  const cpu = process.cpuUsage(cpuBefore)
  const rows = batches.length * BATCH
  return { wall: ((performance.now() - started) * 1000) / rows, cpu: (cpu.user + cpu.system) / rows }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN

const results = variants.map(() => ({ wall: [] as number[], cpu: [] as number[] }))
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [position, variant] of variants.entries()) {
    // One database at a time: each variant's is opened, measured and removed in its turn.
    const opened = await open(variant.dropped)
    const measured = await measureRound(opened)
    results[position]?.wall.push(measured.wall)
    results[position]?.cpu.push(measured.cpu)
    await opened.database.close()
    await rm(opened.directory, { recursive: true, force: true })
  }
}

const reference = median(results[0]?.cpu ?? [])
console.log(`Verification log writes on PGlite, ${new Date().toISOString()}, Node ${process.version}: batches of ${BATCH}, ${rowsPerRound} rows a round after ${WARM_UP_ROWS} of warm-up, medians of ${ROUNDS} rounds`)
console.log('')
console.log('| Table | µs per row, wall | µs per row, CPU (both threads) | CPU against as migrated |')
console.log('|---|---|---|---|')
for (const [position, variant] of variants.entries()) {
  const cpu = median(results[position]?.cpu ?? [])
  console.log(`| ${variant.name} | ${median(results[position]?.wall ?? []).toFixed(1)} | ${cpu.toFixed(1)} | ${(cpu / reference).toFixed(2)}x |`)
}
