import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorCodeOf } from '../../src/plugins/error-handler.js'
import type { SqlDatabase, SqlExecutor } from '../../src/storage/ports.js'
import { openPostgresDatabase } from '../../src/storage/postgres/postgres-database.js'
import { hasPostgres, postgresUrl } from '../helpers/services.js'
import { openTestDatabase, type TestDatabase } from '../helpers/storage.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'

/**
 * PostgreSQL ending a connection while a transaction holds it (a restart, a failover,
 * pg_terminate_backend, a pooler restarting): the transaction fails as an outage (503 to its
 * request), and the process lives on. An 'error' event of a checked-out client with no listener
 * used to end the whole service.
 */
describe.skipIf(!hasPostgres)('a PostgreSQL connection lost inside a transaction', () => {
  let subject: TestDatabase
  let admin: pg.Client
  const uncaught: unknown[] = []
  const recordUncaught = (error: unknown) => uncaught.push(error)

  beforeAll(async () => {
    subject = await openTestDatabase('postgres', { migrated: false })
    admin = new pg.Client({ connectionString: postgresUrl })
    await admin.connect()
    process.on('uncaughtException', recordUncaught)
  })
  afterAll(async () => {
    process.off('uncaughtException', recordUncaught)
    await admin?.end()
    await subject?.database.close()
    await subject?.dispose()
  })

  const backendOf = async (transaction: SqlExecutor) => (await transaction.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid
  const terminate = (pid: number) => admin.query('SELECT pg_terminate_backend($1)', [pid])

  async function expectOutage(database: SqlDatabase, work: (transaction: SqlExecutor) => Promise<unknown>) {
    const failure = await database.transaction(work).then(() => undefined, (error: unknown) => error)
    expect(failure).toBeInstanceOf(Error)
    expect(errorCodeOf(failure as Error)).toBe('service_unavailable')
    // Give a late 'error' event of the lost client its turn, then check that nothing escaped.
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(uncaught).toEqual([])
    expect(await database.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }])
  }

  it('while a statement runs', async () => {
    await expectOutage(subject.database, async (transaction) => {
      const pid = await backendOf(transaction)
      setTimeout(() => void terminate(pid), 300)
      await transaction.query('SELECT pg_sleep(5)')
    })
  })

  it('between two statements (the request doing other work, such as hashing a password)', async () => {
    await expectOutage(subject.database, async (transaction) => {
      await terminate(await backendOf(transaction))
      await new Promise((resolve) => setTimeout(resolve, 300))
      await transaction.query('SELECT 1')
    })
  })
})

/**
 * A database that stops answering (packets dropped, an address that failed over) with a query in
 * flight: closing the pool must not wait for that query's own timeout, or a shutdown outlasts its
 * grace period and a supervisor's (docker stop: 10 s) and is killed half done.
 */
describe.skipIf(!hasPostgres)('closing while PostgreSQL has gone silent', () => {
  it('ends within a few seconds, not at the query\'s timeout', async () => {
    const target = new URL(postgresUrl)
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    const viaProxy = new URL(postgresUrl)
    viaProxy.host = `127.0.0.1:${proxy.port}`
    const database = await openPostgresDatabase({ connectionString: viaProxy.href })
    try {
      expect(await database.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }])
      const stuck = database.query('SELECT pg_sleep(1)').catch((error: unknown) => error)
      await new Promise((resolve) => setTimeout(resolve, 200))
      proxy.silence()
      const started = performance.now()
      await database.close()
      expect(performance.now() - started).toBeLessThan(5_000)
      void stuck
    } finally {
      await proxy.close()
    }
  }, 20_000)
})
