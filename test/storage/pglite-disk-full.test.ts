import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, open, rm, stat, truncate } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorCodeOf } from '../../src/plugins/error-handler.js'
import { StartupError } from '../../src/startup-error.js'
import { openDatabase } from '../../src/storage/open-storage.js'
import { openPgliteDatabase } from '../../src/storage/pglite/pglite-database.js'
import type { DatabaseIncident, SqlDatabase } from '../../src/storage/ports.js'

/** A small file system of its own (tmpfs; root only), so that the test can fill it. */
function mountSmallFileSystem(directory: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=120m', 'tmpfs', directory], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Writes zeros until the file system is full. */
async function fill(file: string): Promise<void> {
  const handle = await open(file, 'w')
  const block = Buffer.alloc(1 << 20)
  try {
    for (;;) await handle.write(block)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
  } finally {
    await handle.close()
  }
}

const directory = process.getuid?.() === 0 ? await mkdtemp(join(tmpdir(), 'tollgate-disk-full-')) : ''
const isMounted = directory !== '' && mountSmallFileSystem(directory)
if (directory !== '' && !isMounted) await rm(directory, { recursive: true, force: true })

/**
 * The embedded database on a disk that fills up. A failed write of PGlite's write-ahead log left
 * its thread spinning, and every statement after it waited for ever (requests hung, nothing was
 * counted as lost). Now the worker is restarted: statements fail at once as an outage meanwhile,
 * and once there is room again the database answers with its data.
 */
describe.skipIf(!isMounted)('the embedded database on a full disk', () => {
  let database: SqlDatabase
  const incidents: DatabaseIncident[] = []
  const ballast = join(directory, 'ballast')

  beforeAll(async () => {
    database = await openPgliteDatabase(join(directory, 'data'), { probeTimeoutMs: 1_000, restartDelayMs: 300, restartTimeoutMs: 15_000 })
    database.onIncident?.((incident) => incidents.push(incident))
    await database.execute('CREATE TABLE kept (id serial PRIMARY KEY, note text)')
    await database.query('INSERT INTO kept (note) SELECT md5(value::text) FROM generate_series(1, 3000) AS value')
    // Room inside the table's pages, so that updates need no new ones: only the log grows.
    await database.query('DELETE FROM kept WHERE id % 30 <> 0')
    await database.execute('VACUUM kept')
  }, 60_000)
  afterAll(async () => {
    await database?.close()
    if (isMounted) execFileSync('umount', [directory])
    await rm(directory, { recursive: true, force: true })
  })

  it('fails statements at once while the log cannot be written, and answers with its data once there is room', async () => {
    await fill(ballast)
    // Each switch to a new log segment must create a file: the second or third finds no room.
    let failure: Error | undefined
    for (let attempt = 0; attempt < 10 && failure === undefined; attempt += 1) {
      try {
        await database.query('UPDATE kept SET note = md5(random()::text) WHERE id = 30')
        await database.query('SELECT pg_switch_wal()')
      } catch (error) {
        failure = error as Error
      }
    }
    expect(failure?.message).toMatch(/No space left on device/)
    // The request whose statement found the disk full gets a 503 too, not a 500.
    expect(errorCodeOf(failure!)).toBe('service_unavailable')

    // Before, this statement never answered.
    const started = performance.now()
    const refused = await database.query('SELECT count(*) AS count FROM kept').then(() => undefined, (error: unknown) => error as Error)
    expect(refused, 'a statement after the failure').toBeInstanceOf(Error)
    expect(performance.now() - started).toBeLessThan(5_000)
    await expect.poll(() => incidents.map((incident) => incident.message).join('\n')).toMatch(/stopped answering/)
    const duringRestart = await database.query('SELECT 1').then(() => undefined, (error: unknown) => error as Error)
    if (duringRestart !== undefined) expect(errorCodeOf(duringRestart)).toBe('service_unavailable')

    await rm(ballast)
    await expect
      .poll(() => database.query<{ count: number }>('SELECT count(*)::int AS count FROM kept').then((rows) => rows[0]?.count, () => undefined), { timeout: 60_000, interval: 250 })
      .toBe(100)
    expect(incidents.some((incident) => incident.isRecovered)).toBe(true)
    await database.query("INSERT INTO kept (note) VALUES ('after')")
    await database.ping()
    // Generous: a start under a loaded CI host replays the log slowly.
  }, 120_000)

  it('will not start on the full disk, and says that the disk is full', async () => {
    const data = join(directory, 'fresh')
    await mkdir(join(data, 'pglite'), { recursive: true })
    await fill(ballast)
    // Room for the data directory's lock file, not for a database.
    await truncate(ballast, (await stat(ballast)).size - 64 * 1024)
    try {
      const failure = await openDatabase({ databaseUrl: undefined, dataDirectory: data }).then(() => undefined, (error: unknown) => error as Error)
      expect(failure).toBeInstanceOf(StartupError)
      expect(failure?.message).toMatch(/could not be opened \(.*\): the disk that holds it is full; make room there$/)
    } finally {
      await rm(ballast)
    }
  }, 60_000)
})
