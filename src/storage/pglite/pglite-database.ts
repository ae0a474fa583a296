import { setTimeout as sleep } from 'node:timers/promises'
import { Worker } from 'node:worker_threads'
import type { BulkLoad, DatabaseIncident, SqlDatabase, SqlExecutor, SqlStatement } from '../ports.js'

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
  | { op: 'load'; load: BulkLoad; first: readonly SqlStatement[] }
  | { op: 'close' }

export interface PgliteOptions {
  /** How long the worker may answer nothing after a storage failure before it is restarted (15 s). */
  probeTimeoutMs?: number
  /** The wait between attempts to start the worker again (the disk may still be full). */
  restartDelayMs?: number
  /** How long the worker may take to open at start (a new data directory is created then; 120 s). */
  openTimeoutMs?: number
  /** How long a worker started again may take to open (it replays the write-ahead log; openTimeoutMs). */
  restartTimeoutMs?: number
}

/** An error from the worker, with PostgreSQL's fields (code, detail, constraint...) as they were. */
function errorFrom(described: Record<string, unknown> & { message: string }): Error {
  const { message, name: _name, ...fields } = described
  return Object.assign(new Error(message), fields)
}

/**
 * Insufficient resources (53: disk full) or a system error (58: I/O), where the files under PGlite
 * failed it, or an error with no SQLSTATE at all (Emscripten's file system, a WebAssembly fault).
 */
function mayHaveStoppedIt(error: Error): boolean {
  const { code } = error as Error & { code?: unknown }
  return typeof code !== 'string' || /^5[38][0-9A-Z]{3}$/.test(code)
}

/** What callers get while the worker restarts: PostgreSQL's "cannot connect now", an outage (503). */
function unavailable(reason: string): Error {
  return Object.assign(new Error(`the embedded database is restarting: ${reason}`), { code: '57P03' })
}

/** How long close() waits for PGlite to close (a checkpoint) before it ends the worker. */
const CLOSE_TIMEOUT_MS = 10_000

/** A reply, with the generation of the worker that gave it (a transaction belongs to that worker). */
interface Answer {
  reply: WorkerReply
  generation: number
}

interface Running {
  worker: Worker
  /** Counts the workers started: a transaction begun on an earlier one has ended with it. */
  generation: number
}

/**
 * The embedded system of record: real PostgreSQL compiled to WebAssembly, in `dataDirectory`
 * (or memory when it is undefined). It serves one process; production runs PostgreSQL.
 *
 * PGlite runs in a worker thread: its statements are synchronous WebAssembly, and on the event
 * loop's thread every batch of verification-log rows would hold up the requests behind it. The
 * worker keeps the process alive only while a statement is outstanding.
 *
 * A failed write of PGlite's write-ahead log (a full disk) leaves its thread spinning for ever,
 * as PostgreSQL would stop with a PANIC: every later statement waited without end. So after a
 * storage failure (or an error without a SQLSTATE: a file system or WebAssembly fault) the worker
 * must answer something within `probeTimeoutMs`; if it answers nothing at all in that time, it is
 * ended and started again, as PostgreSQL restarts after a crash (its log replayed), every few
 * seconds until it opens. Meanwhile statements fail at once as an outage (503, not a hang), and
 * what the verification log holds is written once the database answers again. A database in
 * memory would come back empty: it fails for good instead.
 */
export async function openPgliteDatabase(dataDirectory: string | undefined, options: PgliteOptions = {}): Promise<SqlDatabase> {
  const probeTimeoutMs = options.probeTimeoutMs ?? 15_000
  const restartDelayMs = options.restartDelayMs ?? 5_000
  const openTimeoutMs = options.openTimeoutMs ?? 120_000
  const restartTimeoutMs = options.restartTimeoutMs ?? openTimeoutMs
  const pending = new Map<number, { resolve: (reply: Answer) => void; reject: (error: Error) => void }>()
  const incidentListeners: ((incident: DatabaseIncident) => void)[] = []
  let nextId = 1
  let generation = 0
  let closing = false
  let closed = false
  /** Set when the database cannot be had again (in memory): every statement fails with it. */
  let brokenFor: Error | undefined
  let recovering: Promise<void> | undefined
  let probing = false
  /** When the worker last answered anything: a busy worker answers now and then, a spinning one never. */
  let lastAnswerAt = performance.now()
  /** The worker serving statements; undefined once ended and not (yet) started again. */
  let current: Running | undefined
  /** A worker opening PGlite, which close() ends rather than waits for, as it does the wait between attempts. */
  let opening: Worker | undefined
  const stopRetrying = new AbortController()

  const report = (incident: DatabaseIncident) => {
    for (const listener of incidentListeners) listener(incident)
  }
  const failAll = (error: Error) => {
    for (const { reject } of pending.values()) reject(error)
    pending.clear()
  }

  /** Starts a worker and waits until its PGlite is open (within `timeoutMs`). */
  async function startWorker(timeoutMs: number): Promise<Running> {
    const worker = new Worker(new URL('./pglite-worker.js', import.meta.url), { workerData: { dataDirectory } })
    const started: Running = { worker, generation: ++generation }
    opening = worker
    let timer: NodeJS.Timeout | undefined
    // Removed with off(): Worker keeps listeners of its own, which removeAllListeners would take.
    let onStart: (reply: WorkerReply) => void = () => {}
    let onFailure: (error: Error) => void = () => {}
    let onExit: (code: number) => void = () => {}
    try {
      await new Promise<void>((resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`it did not open within ${timeoutMs} ms`)), timeoutMs)
        onStart = (reply) => {
          if ('startError' in reply) {
            const { message, ...fields } = reply.startError
            const where = dataDirectory === undefined ? 'in memory' : `in ${dataDirectory}`
            reject(errorFrom({ ...fields, message: `could not open the embedded database ${where}: ${message}` }))
          } else if ('ready' in reply) {
            resolve()
          }
        }
        onFailure = reject
        onExit = (code) => reject(new Error(`the embedded database's worker exited at start (code ${code})`))
        worker.on('message', onStart)
        worker.on('error', onFailure)
        worker.on('exit', onExit)
      })
    } catch (error) {
      await worker.terminate()
      throw error
    } finally {
      opening = undefined
      clearTimeout(timer)
      worker.off('message', onStart)
      worker.off('error', onFailure)
      worker.off('exit', onExit)
    }
    worker.on('message', (reply: WorkerReply) => {
      if (!('id' in reply) || current !== started) return
      lastAnswerAt = performance.now()
      const waiter = pending.get(reply.id)
      if (waiter === undefined) return
      pending.delete(reply.id)
      if (pending.size === 0) worker.unref()
      if (!('error' in reply)) return waiter.resolve({ reply, generation: started.generation })
      const error = errorFrom(reply.error)
      waiter.reject(error)
      if (mayHaveStoppedIt(error)) checkAnswers(error)
    })
    const onGone = (reason: string) => {
      if (current !== started) return
      // Closing, nothing starts it again: what waits for it fails now rather than never.
      if (closing) failAll(new Error(`the embedded database closed: ${reason}`))
      else recover(reason)
    }
    worker.on('error', (error) => onGone(`its worker failed (${error.message})`))
    worker.on('exit', (code) => onGone(`its worker exited (code ${code})`))
    worker.unref()
    return started
  }

  /**
   * After a failure that may have stopped PGlite: the worker must answer something (the check,
   * or any statement queued before it) within probeTimeoutMs of its last answer, else it is
   * restarted. A long statement (a VACUUM) keeps a healthy worker silent only as long as it runs.
   */
  function checkAnswers(cause: Error): void {
    if (probing || recovering !== undefined || closing) return
    probing = true
    let settled = false
    const watch = () => {
      if (settled) return
      const silentForMs = performance.now() - lastAnswerAt
      if (silentForMs < probeTimeoutMs) {
        timer = setTimeout(watch, probeTimeoutMs - silentForMs)
        timer.unref()
      } else recover(`no answer within ${probeTimeoutMs} ms after "${cause.message}"`)
    }
    let timer = setTimeout(watch, probeTimeoutMs)
    timer.unref()
    call({ op: 'query', sql: 'SELECT 1', params: [] })
      .catch(() => undefined)
      .finally(() => {
        settled = true
        clearTimeout(timer)
        probing = false
      })
  }

  function recover(reason: string): void {
    if (closing || brokenFor !== undefined) return
    if (dataDirectory === undefined) {
      brokenFor = unavailable(`${reason} (a database in memory cannot be had again)`)
      report({ message: `the embedded database in memory stopped answering: ${reason}`, isRecovered: false })
      failAll(brokenFor)
      void current?.worker.terminate()
      current = undefined
      return
    }
    recovering ??= (async () => {
      report({ message: `the embedded database stopped answering: ${reason}; starting it again`, isRecovered: false })
      failAll(unavailable(reason))
      const ended = current
      current = undefined
      await ended?.worker.terminate()
      for (let attempt = 1; !closing; attempt += 1) {
        try {
          current = await startWorker(restartTimeoutMs)
          lastAnswerAt = performance.now()
          report({ message: `the embedded database answers again (attempt ${attempt})`, isRecovered: true })
          return
        } catch (error) {
          if (closing) return
          report({ message: `could not start the embedded database again; trying again in ${restartDelayMs} ms`, error: error as Error, isRecovered: false })
          await sleep(restartDelayMs, undefined, { signal: stopRetrying.signal }).catch(() => undefined)
        }
      }
    })().finally(() => {
      // The check under way, if any, failed with the rest (failAll) and cleared `probing` itself.
      recovering = undefined
    })
  }

  current = await startWorker(openTimeoutMs)

  /** Sends a command to the worker; answers with the generation of the worker that took it. */
  const call = (command: Command, transactionOf?: number): Promise<Answer> => {
    if (closed) return Promise.reject(new Error('the embedded database is closed'))
    if (brokenFor !== undefined) return Promise.reject(brokenFor)
    if (current === undefined) return Promise.reject(unavailable('it is starting again after a storage failure'))
    if (transactionOf !== undefined && transactionOf !== current.generation) {
      return Promise.reject(unavailable('the transaction ended when its worker was restarted'))
    }
    const id = nextId++
    const { worker } = current
    if (pending.size === 0) {
      worker.ref()
      // Silence before this statement was not the worker's.
      lastAnswerAt = performance.now()
    }
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject })
      worker.postMessage({ id, ...command })
    })
  }
  const rowsOf = <Row>({ reply }: Answer): Row[] => ('rows' in reply ? (reply.rows as Row[]) : [])

  const executor = (transaction?: { id: number; generation: number }): SqlExecutor => ({
    async query<Row extends object>(sql: string, params: readonly unknown[] = []) {
      const command: Command = { op: 'query', sql, params, ...(transaction === undefined ? {} : { transaction: transaction.id }) }
      return rowsOf<Row>(await call(command, transaction?.generation))
    },
  })
  const outsideTransactions = executor()

  return {
    kind: 'pglite',
    ...outsideTransactions,
    async execute(script) {
      await call({ op: 'exec', sql: script })
    },
    async transaction(work) {
      const { reply: begun, generation: openedOn } = await call({ op: 'begin' })
      if (!('transaction' in begun)) throw new Error('the embedded database did not open a transaction')
      const transaction = { id: begun.transaction, generation: openedOn }
      let result
      try {
        result = await work(executor(transaction))
      } catch (error) {
        // The caller's error is the one to report; a rollback fails only with the worker gone.
        await call({ op: 'rollback', transaction: transaction.id }, transaction.generation).catch(() => {})
        throw error
      }
      await call({ op: 'commit', transaction: transaction.id }, transaction.generation)
      return result
    },
    async loadRows(load, first = []) {
      await call({ op: 'load', load, first })
    },
    async ping() {
      // Not SELECT 1: on a full disk PGlite answers reads while every write fails, and /ready must
      // say so. txid_current() takes a transaction id, so its commit writes to the log.
      await outsideTransactions.query('SELECT txid_current()')
    },
    onIncident(listener) {
      incidentListeners.push(listener)
    },
    async close() {
      if (closing) return
      // Attempts to start the worker again stop: one under way is ended (a full disk may hold it up).
      closing = true
      stopRetrying.abort()
      await opening?.terminate()
      await recovering
      // A worker that does not answer its close (spinning) is ended all the same, within the
      // shutdown's grace; PGlite replays its log at the next start, as after a crash.
      const closeAnswer = call({ op: 'close' }).catch(() => undefined)
      await Promise.race([closeAnswer, sleep(CLOSE_TIMEOUT_MS, undefined, { ref: false })])
      closed = true
      failAll(new Error('the embedded database is closed'))
      await current?.worker.terminate()
    },
  }
}
