import { randomUUID } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import type { VerificationLogEntry } from '../../src/plugins/verification-log.js'
import type { SqlExecutor } from '../../src/storage/ports.js'
import { hasPostgres } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

function entry(siteId: string, overrides: Partial<VerificationLogEntry> = {}): VerificationLogEntry {
  return {
    siteId,
    challengeId: randomUUID(),
    createdAt: new Date(),
    action: 'allow',
    errorCode: null,
    riskScore: 12,
    anomalies: ['missing_origin', 'no_interaction'],
    countryCode: 'XX',
    clientIp: '198.51.100.4',
    hostname: 'shop.example.com',
    pageAction: 'login',
    userAgent: 'Mozilla/5.0',
    difficulty: 18,
    solveTimeMs: 420,
    stepUps: 0,
    device: '5d41402abc4b2a76b9719d91',
    decidedBy: null,
    ...overrides,
  }
}

/** How many rows the site has in the log. */
async function countSiteRows(database: SqlExecutor, siteId: string): Promise<number | undefined> {
  return (await database.query<{ count: number }>('SELECT count(*)::int AS count FROM verifications WHERE site_id = $1', [siteId]))[0]?.count
}

/** The site's rows as counted from inside the database's close: the last moment it is open. */
function countRowsAtClose(service: TestApp, siteId: string): () => number | undefined {
  let counted: number | undefined
  const close = service.app.database.close.bind(service.app.database)
  service.app.database.close = async () => {
    counted = await countSiteRows(service.app.database, siteId)
    await close()
  }
  return () => counted
}

const countRows = async (query: (sql: string) => Promise<{ count: number }[]>) => (await query('SELECT count(*)::int AS count FROM verifications'))[0]?.count

describe.each([
  { database: 'pglite' as const, available: true },
  { database: 'postgres' as const, available: hasPostgres },
])('the verification log on $database', ({ database, available }) => {
  it.skipIf(!available)('writes full batches in one bulk load each, and what is left within the interval', async () => {
    const service = await buildTestApp({ database })
    try {
      const siteId = randomUUID()
      const batchSize = 500
      const query = vi.spyOn(service.app.database, 'query')
      const loads = vi.spyOn(service.app.database, 'loadRows')
      for (let index = 0; index <= batchSize * 2; index++) service.app.verificationLog.record(entry(siteId))
      // Nothing was written on the calling path.
      expect(query).not.toHaveBeenCalled()
      expect(loads).not.toHaveBeenCalled()
      await vi.waitFor(async () => expect(await countRows((sql) => service.app.database.query(sql))).toBe(batchSize * 2 + 1), { timeout: 3_000 })
      expect(loads.mock.calls.map(([load]) => load.values[0]?.length)).toEqual([batchSize, batchSize, 1])
    } finally {
      await service.close()
    }
  })

  it.skipIf(!available)('keeps the rows that arrive during a write for the next full batch or the interval, not a stream of small INSERTs', async () => {
    const service = await buildTestApp({ database })
    try {
      const siteId = randomUUID()
      const loads = vi.spyOn(service.app.database, 'loadRows')
      for (let index = 0; index < 500; index++) service.app.verificationLog.record(entry(siteId))
      // A busy service: a row every millisecond while the full batch is being written, and after.
      const started = performance.now()
      for (let index = 0; index < 300; index++) {
        service.app.verificationLog.record(entry(siteId))
        await new Promise((resolve) => setTimeout(resolve, 1))
      }
      await service.app.verificationLog.flush()
      expect(await countRows((sql) => service.app.database.query(sql))).toBe(800)
      const batchSizes = loads.mock.calls.map(([load]) => load.values[0]?.length)
      // The full batch, then one write per second of the interval (one, unless a loaded machine
      // stretched the 300 ms), then the flush; a stream of small INSERTs would be a dozen or more.
      const intervals = Math.ceil((performance.now() - started) / 1000)
      expect(batchSizes[0]).toBe(500)
      expect(batchSizes.length).toBeLessThanOrEqual(2 + intervals)
    } finally {
      await service.close()
    }
  })

  it.skipIf(!available)('keeps every column, anomalies included (and an empty list)', async () => {
    const service = await buildTestApp({ database })
    try {
      const siteId = randomUUID()
      const accepted = entry(siteId, { decidedBy: 'allowlist' })
      const rejected = entry(siteId, { action: 'rejected', errorCode: 'solution_invalid', riskScore: null, anomalies: [], challengeId: null, countryCode: null })
      service.app.verificationLog.record(accepted)
      service.app.verificationLog.record(rejected)
      await service.app.verificationLog.flush()
      const rows = await service.app.database.query('SELECT * FROM verifications WHERE site_id = $1 ORDER BY action', [siteId])
      expect(rows).toEqual([
        expect.objectContaining({
          action: 'allow', anomalies: ['missing_origin', 'no_interaction'], risk_score: 12, client_ip: '198.51.100.4', solve_time_ms: 420, decided_by: 'allowlist',
        }),
        expect.objectContaining({ action: 'rejected', error_code: 'solution_invalid', anomalies: [], risk_score: null, challenge_id: null, decided_by: null }),
      ])
    } finally {
      await service.close()
    }
  })

  it.skipIf(!available)('writes what is buffered when the app closes', async () => {
    const service = await buildTestApp({ database })
    const siteId = randomUUID()
    const rowsAtClose = countRowsAtClose(service, siteId)
    for (let index = 0; index < 7; index++) service.app.verificationLog.record(entry(siteId))
    await service.close()
    expect(rowsAtClose()).toBe(7)
  })

  it.skipIf(!available)('at shutdown, tries a failed write again while the database comes back (a restart, a failover)', async () => {
    const service = await buildTestApp({ database })
    const siteId = randomUUID()
    const rowsAtClose = countRowsAtClose(service, siteId)
    const outage = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })
    // The first two attempts meet a database that is restarting.
    vi.spyOn(service.app.database, 'loadRows').mockRejectedValueOnce(outage()).mockRejectedValueOnce(outage())
    for (let index = 0; index < 7; index++) service.app.verificationLog.record(entry(siteId))
    await service.close()
    expect(rowsAtClose()).toBe(7)
    expect(service.app.unwrittenAtShutdown).toEqual([])
  })

  it.skipIf(!available)('at shutdown, records the rows it could not write once the retries are spent, for the exit code', async () => {
    const service = await buildTestApp({ database })
    const outage = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    const siteId = randomUUID()
    // Only the log's writes fail: the counters' own flush is not part of this test.
    vi.spyOn(service.app.database, 'loadRows').mockRejectedValue(outage)
    for (let index = 0; index < 7; index++) service.app.verificationLog.record(entry(siteId))
    await service.close()
    expect(service.app.unwrittenAtShutdown).toEqual(['7 verification log rows'])
  })

  it.skipIf(!available)('at shutdown, gives up on a database gone silent within the retry time and counts the rows in flight as lost', async () => {
    const service = await buildTestApp({ database })
    const siteId = randomUUID()
    // The log's write never gets an answer (a database that stopped answering, its connections open).
    vi.spyOn(service.app.database, 'loadRows').mockImplementation(() => new Promise(() => {}))
    for (let index = 0; index < 7; index++) service.app.verificationLog.record(entry(siteId))
    const started = performance.now()
    await service.close()
    // Within the 2 s of retries (and far within the shutdown's 15 s), with the loss told for the exit code.
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(service.app.unwrittenAtShutdown).toEqual(['7 verification log rows'])
  })

  it.skipIf(!available)('at shutdown, goes on with a slow database as long as batches land (past the 2 s given to a silent one)', async () => {
    const service = await buildTestApp({ database })
    const siteId = randomUUID()
    const rowsAtClose = countRowsAtClose(service, siteId)
    const loadRows = service.app.database.loadRows.bind(service.app.database)
    // Every batch takes 500 ms: six batches take 3 s in all.
    vi.spyOn(service.app.database, 'loadRows').mockImplementation(async (load, first) => {
      await new Promise((resolve) => setTimeout(resolve, 500))
      return loadRows(load, first)
    })
    for (let index = 0; index < 2_999; index++) service.app.verificationLog.record(entry(siteId))
    await service.close()
    expect(rowsAtClose()).toBe(2_999)
    expect(service.app.unwrittenAtShutdown).toEqual([])
  })

  it.skipIf(!available)('keeps the rows when the database fails, and writes them on the next attempt', async () => {
    const service = await buildTestApp({ database })
    try {
      const siteId = randomUUID()
      const loads = vi.spyOn(service.app.database, 'loadRows').mockRejectedValueOnce(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))
      service.app.verificationLog.record(entry(siteId))
      await expect(service.app.verificationLog.flush()).rejects.toThrow('ECONNREFUSED')
      loads.mockRestore()
      await service.app.verificationLog.flush()
      expect(await countRows((sql) => service.app.database.query(sql))).toBe(1)
    } finally {
      await service.close()
    }
  })
})

/** tollgate_verification_log_dropped_rows_total{reason} as /metrics shows it. */
async function droppedRows(service: TestApp, reason: string): Promise<number> {
  const metrics = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
  const match = new RegExp(`^tollgate_verification_log_dropped_rows_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(metrics)
  return match === null ? 0 : Number(match[1])
}

describe('a row the database refuses', () => {
  it('is dropped alone; the rest of its batch is written', async () => {
    const service = await buildTestApp()
    try {
      const siteId = randomUUID()
      service.app.verificationLog.record(entry(siteId))
      service.app.verificationLog.record(entry(siteId, { riskScore: 1_000_000 })) // out of smallint range
      service.app.verificationLog.record(entry(siteId))
      await service.app.verificationLog.flush()
      expect(await countRows((sql) => service.app.database.query(sql))).toBe(2)
      expect(await droppedRows(service, 'refused')).toBe(1)
    } finally {
      await service.close()
    }
  })
})

describe('a database that goes away in the middle of a write', () => {
  const outage = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })

  it('writes each row once: rows written before the failure are not written again', async () => {
    const service = await buildTestApp()
    try {
      const siteId = randomUUID()
      const { database } = service.app
      const loadRows = database.loadRows.bind(database)
      let calls = 0
      // The batch fails on its refused row; row by row, the first row is written, the refused one
      // dropped, and the database goes away at the third.
      const spy = vi.spyOn(database, 'loadRows').mockImplementation((load, first) => (++calls === 4 ? Promise.reject(outage()) : loadRows(load, first)))
      for (const riskScore of [1, 1_000_000, 3, 4]) service.app.verificationLog.record(entry(siteId, { riskScore }))
      await expect(service.app.verificationLog.flush()).rejects.toThrow('ECONNREFUSED')
      spy.mockRestore()
      await service.app.verificationLog.flush()
      const rows = await database.query<{ risk_score: number }>('SELECT risk_score FROM verifications WHERE site_id = $1 ORDER BY risk_score', [siteId])
      expect(rows.map((row) => row.risk_score)).toEqual([1, 3, 4])
    } finally {
      await service.close()
    }
  })

  it.each([
    ['made up by the writer', () => undefined],
    ["given by the verify route (its request's id)", () => randomUUID()],
  ])('writes each row once, and counts it once, when the answer to a committed write is lost and the batch is tried again (ids %s)', async (_case, idOf) => {
    const service = await buildTestApp()
    try {
      const siteId = randomUUID()
      const ids = [idOf(), idOf(), idOf()]
      const { database } = service.app
      const loadRows = database.loadRows.bind(database)
      // The write commits; the connection drops before its answer arrives.
      const spy = vi.spyOn(database, 'loadRows').mockImplementationOnce(async (load, first) => {
        await loadRows(load, first)
        throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })
      })
      for (const id of ids) service.app.verificationLog.record(entry(siteId, id === undefined ? {} : { id }))
      await expect(service.app.verificationLog.flush()).rejects.toThrow('ECONNRESET')
      await service.app.verificationLog.flush()
      // The attempt found its rows written: nothing was loaded again (a second load would have
      // failed on their ids and dropped them one by one as refused rows).
      expect(spy).toHaveBeenCalledTimes(1)
      spy.mockRestore()
      const logged = await countSiteRows(database, siteId)
      const [counted] = await database.query<{ count: number }>(
        "SELECT sum(count)::int AS count FROM verification_rollups WHERE site_id = $1 AND kind = 'action'",
        [siteId],
      )
      expect({ logged, counted: counted?.count }).toEqual({ logged: 3, counted: 3 })
      if (ids[0] !== undefined) {
        const rows = await database.query<{ id: string }>('SELECT id FROM verifications WHERE site_id = $1 ORDER BY id', [siteId])
        expect(rows.map((row) => row.id)).toEqual([...ids].sort())
      }
    } finally {
      await service.close()
    }
  })

  it('writes rows that come with their ids (the requests\') without first looking for them: only a retry looks', async () => {
    const service = await buildTestApp()
    try {
      const siteId = randomUUID()
      const { database } = service.app
      const lookups = vi.spyOn(database, 'query')
      for (let index = 0; index < 3; index++) service.app.verificationLog.record(entry(siteId, { id: randomUUID() }))
      await service.app.verificationLog.flush()
      expect(lookups.mock.calls.filter(([sql]) => sql.includes('FROM verifications'))).toEqual([])
      lookups.mockRestore()
      expect(await countSiteRows(database, siteId)).toBe(3)
    } finally {
      await service.close()
    }
  })

  it('writes at the interval the rows that waited when it fired, leaving those that arrive while it writes for the next', async () => {
    const service = await buildTestApp()
    try {
      const siteId = randomUUID()
      const { database } = service.app
      const loadRows = database.loadRows.bind(database)
      const startedAt: number[] = []
      // A slow database: each write takes 400 ms.
      const loads = vi.spyOn(database, 'loadRows').mockImplementation(async (load, first) => {
        startedAt.push(performance.now())
        await new Promise((resolve) => setTimeout(resolve, 400))
        return loadRows(load, first)
      })
      for (let index = 0; index < 10; index++) service.app.verificationLog.record(entry(siteId))
      await vi.waitFor(() => expect(startedAt).toHaveLength(1), { timeout: 3_000, interval: 5 })
      // A busy service: rows keep coming while the interval's write is on its way.
      for (let index = 0; index < 20; index++) {
        service.app.verificationLog.record(entry(siteId))
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      await vi.waitFor(() => expect(startedAt).toHaveLength(2), { timeout: 5_000, interval: 20 })
      expect(loads.mock.calls.map(([load]) => load.values[0]?.length)).toEqual([10, 20])
      // They went at the next interval, a second after the first: not right after the first write
      // landed (400 ms), as they would if the interval's write drained what arrived meanwhile.
      expect((startedAt[1] ?? 0) - (startedAt[0] ?? 0)).toBeGreaterThan(800)
      loads.mockRestore()
    } finally {
      await service.close()
    }
  })

  it('keeps at most maxBufferedRows while a write hangs, the newest ones', async () => {
    const service = await buildTestApp({ verificationLogMaxBufferedRows: 1_000 })
    try {
      const siteId = randomUUID()
      const { database } = service.app
      const loadRows = database.loadRows.bind(database)
      let answer: () => void = () => {}
      const hanging = new Promise<void>((resolve) => {
        answer = resolve
      })
      // The first batch's write does not answer until the end of the test.
      const spy = vi.spyOn(database, 'loadRows').mockImplementationOnce(async (load, first) => {
        await hanging
        return loadRows(load, first)
      })
      for (let index = 0; index < 5_000; index++) service.app.verificationLog.record(entry(siteId, { solveTimeMs: index }))
      spy.mockRestore()
      answer()
      await service.app.verificationLog.flush()
      const rows = await database.query<{ count: number; newest: number }>(
        'SELECT count(*)::int AS count, max(solve_time_ms) AS newest FROM verifications WHERE site_id = $1',
        [siteId],
      )
      // The hung batch (500 rows) and at most 1,000 of the rest, the last one among them.
      expect(rows[0]?.count).toBeGreaterThan(500)
      expect(rows[0]?.count).toBeLessThanOrEqual(1_500)
      expect(rows[0]?.newest).toBe(4_999)
      // /metrics counts every row that did not make it.
      expect(await droppedRows(service, 'buffer_full')).toBe(5_000 - (rows[0]?.count ?? 0))
    } finally {
      await service.close()
    }
  })
})
