import { Worker } from 'node:worker_threads'
import type { SqlDatabase, SqlExecutor } from '../ports.js'

/** What the worker answers (see pglite-worker.js). */
type WorkerReply =
  | { id: number; rows: object[] }
  | { id: number; transaction: number }
  | { id: number; error: Record<string, unknown> & { message: string } }
  | { ready: true }
  | { startError: Record<string, unknown> & { message: string } }

type Command =
  | { op: 'query'; sql: string; params: readonly unknown[]; transaction?: number }
  | { op: 'exec'; sql: string }
  | { op: 'begin' }
  | { op: 'commit' | 'rollback'; transaction: number }
  | { op: 'close' }

/** An error from the worker, with PostgreSQL's fields (code, detail, constraint...) as they were. */
function errorFrom(described: Record<string, unknown> & { message: string }): Error {
  const { message, name: _name, ...fields } = described
  return Object.assign(new Error(message), fields)
}

/**
 * The embedded system of record: real PostgreSQL compiled to WebAssembly, in `dataDirectory`
 * (or memory when it is undefined). It serves one process; production runs PostgreSQL.
 *
 * PGlite runs in a worker thread: its statements are synchronous WebAssembly, and on the event
 * loop's thread every batch of verification-log rows would hold up the requests behind it. The
 * worker keeps the process alive only while a statement is outstanding.
 */
export async function openPgliteDatabase(dataDirectory: string | undefined): Promise<SqlDatabase> {
  const worker = new Worker(new URL('./pglite-worker.js', import.meta.url), { workerData: { dataDirectory } })
  const pending = new Map<number, { resolve: (reply: WorkerReply) => void; reject: (error: Error) => void }>()
  let nextId = 1
  let failure: Error | undefined

  const failAll = (error: Error) => {
    failure ??= error
    for (const { reject } of pending.values()) reject(error)
    pending.clear()
  }
  worker.on('error', failAll)
  worker.on('exit', (code) => failAll(new Error(`the embedded database's worker exited (code ${code})`)))

  await new Promise<void>((resolve, reject) => {
    const onStart = (reply: WorkerReply) => {
      if ('startError' in reply) {
        const { message, ...fields } = reply.startError
        const where = dataDirectory === undefined ? 'in memory' : `in ${dataDirectory}`
        reject(errorFrom({ ...fields, message: `could not open the embedded database ${where}: ${message}` }))
      } else if ('ready' in reply) {
        resolve()
      }
    }
    worker.once('message', onStart)
    worker.once('error', reject)
  })
  worker.on('message', (reply: WorkerReply) => {
    if (!('id' in reply)) return
    const waiter = pending.get(reply.id)
    if (waiter === undefined) return
    pending.delete(reply.id)
    if (pending.size === 0) worker.unref()
    if ('error' in reply) waiter.reject(errorFrom(reply.error))
    else waiter.resolve(reply)
  })
  worker.unref()

  const call = (command: Command): Promise<WorkerReply> => {
    if (failure !== undefined) return Promise.reject(failure)
    const id = nextId++
    if (pending.size === 0) worker.ref()
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject })
      worker.postMessage({ id, ...command })
    })
  }
  const rowsOf = <Row>(reply: WorkerReply): Row[] => ('rows' in reply ? (reply.rows as Row[]) : [])

  const executor = (transaction?: number): SqlExecutor => ({
    async query<Row extends object>(sql: string, params: readonly unknown[] = []) {
      return rowsOf<Row>(await call({ op: 'query', sql, params, ...(transaction === undefined ? {} : { transaction }) }))
    },
  })
  const outsideTransactions = executor()
  let closed = false

  return {
    kind: 'pglite',
    ...outsideTransactions,
    async execute(script) {
      await call({ op: 'exec', sql: script })
    },
    async transaction(work) {
      const begun = await call({ op: 'begin' })
      if (!('transaction' in begun)) throw new Error('the embedded database did not open a transaction')
      let result
      try {
        result = await work(executor(begun.transaction))
      } catch (error) {
        // The caller's error is the one to report; a rollback fails only with the worker gone.
        await call({ op: 'rollback', transaction: begun.transaction }).catch(() => {})
        throw error
      }
      await call({ op: 'commit', transaction: begun.transaction })
      return result
    },
    async ping() {
      await outsideTransactions.query('SELECT 1')
    },
    async close() {
      if (closed) return
      closed = true
      await call({ op: 'close' })
      await worker.terminate()
    },
  }
}
