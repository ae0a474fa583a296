// The embedded database's own thread: PGlite runs PostgreSQL compiled to WebAssembly, and every
// statement it runs blocks the thread it runs on (a 100-row insert into the verification log
// takes milliseconds). Here that thread is not the one answering HTTP requests.
//
// Plain JavaScript on purpose: a worker thread is started from a file, and this one must load the
// same way under `tsx`, vitest and Node alone. The protocol is the one pglite-database.ts speaks:
//   -> { id, op: 'query', sql, params, transaction? } | { id, op: 'exec', sql } | { id, op: 'begin' }
//      | { id, op: 'commit' | 'rollback', transaction } | { id, op: 'load', load, first } | { id, op: 'close' }
//   <- { id, rows } | { id, transaction } | { id, error } and, once, { ready: true } or { startError }
import { Blob } from 'node:buffer'
import process from 'node:process'
import { parentPort, workerData } from 'node:worker_threads'
import { PGlite, types } from '@electric-sql/pglite'
import { quoteIdentifier } from '../quote-identifier.js'
import { encodeBinaryCopy } from './binary-copy.js'

/** A PostgreSQL error as plain data (the structured clone of an Error keeps only its message). */
function describeError(error) {
  if (typeof error !== 'object' || error === null) return { message: String(error) }
  // PGlite's file system throws Emscripten's ErrnoError, which is no Error and has no message.
  const message = error instanceof Error ? error.message : `${error.name ?? 'error'}${error.errno === undefined ? '' : ` (errno ${error.errno})`}`
  const described = { message, name: error.name }
  for (const [key, value] of Object.entries(error)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) described[key] = value
  }
  return described
}

const port = parentPort
if (port === null) throw new Error('pglite-worker.js runs as a worker thread')

let database
try {
  database = await PGlite.create({
    ...(workerData.dataDirectory === undefined ? {} : { dataDir: workerData.dataDirectory }),
    parsers: {
      [types.INT8]: (value) => Number(value),
      [types.NUMERIC]: (value) => Number(value),
    },
  })
} catch (error) {
  port.postMessage({ startError: describeError(error) })
  process.exit(1)
}

/** Open transactions: the commands for each, in order, and whoever waits for the next one. */
const transactions = new Map()
let nextTransaction = 1

/** Posts the outcome of `work` as the answer to command `id`; the returned promise never rejects. */
function answer(id, work) {
  return work.then(
    (reply) => port.postMessage({ id, ...reply }),
    (error) => port.postMessage({ id, error: describeError(error) }),
  )
}

const rowsOf = (result) => ({ rows: result.rows })

function nextCommandOf(transaction) {
  const queued = transaction.commands.shift()
  if (queued !== undefined) return Promise.resolve(queued)
  return new Promise((resolve) => {
    transaction.waiting = resolve
  })
}

/**
 * The statements `first`, then the rows of `load` as one binary COPY, in one transaction. The rows
 * are encoded here, off the thread that answers requests.
 */
function loadRows({ load, first }) {
  return database.transaction(async (tx) => {
    for (const statement of first) await tx.query(statement.sql, statement.params ?? [])
    const blob = new Blob([encodeBinaryCopy(load.columns, load.values)])
    const columns = load.columns.map((column) => quoteIdentifier(column.name)).join(', ')
    await tx.query(`COPY ${quoteIdentifier(load.table)} (${columns}) FROM '/dev/blob' WITH (FORMAT binary)`, [], { blob })
    return { rows: [] }
  })
}

/** Marks a rollback asked for by the caller, so that it is not reported as a failure. */
class RolledBack extends Error {}

/**
 * BEGIN answers once PGlite has opened the transaction (it waits behind any other one); the
 * transaction then runs the commands sent for it until COMMIT or ROLLBACK.
 */
function begin(id) {
  const transaction = { id: nextTransaction++, commands: [], waiting: undefined }
  transactions.set(transaction.id, transaction)
  let ending
  database
    .transaction(async (tx) => {
      port.postMessage({ id, transaction: transaction.id })
      for (;;) {
        const command = await nextCommandOf(transaction)
        if (command.op === 'query') {
          // Statements of one transaction run one after another.
          await answer(command.id, tx.query(command.sql, command.params).then(rowsOf))
          continue
        }
        ending = command
        if (command.op === 'rollback') throw new RolledBack()
        return
      }
    })
    .then(
      () => port.postMessage({ id: ending.id, rows: [] }),
      (error) => {
        if (ending !== undefined && error instanceof RolledBack) port.postMessage({ id: ending.id, rows: [] })
        else if (ending !== undefined) port.postMessage({ id: ending.id, error: describeError(error) })
        else port.postMessage({ id, error: describeError(error) })
      },
    )
    .finally(() => transactions.delete(transaction.id))
}

port.on('message', (command) => {
  // A transaction's statements, COMMIT and ROLLBACK go to the transaction, in the order sent.
  if (command.transaction !== undefined) {
    const transaction = transactions.get(command.transaction)
    if (transaction === undefined) port.postMessage({ id: command.id, error: { message: 'the transaction has ended' } })
    else deliver(transaction, command)
    return
  }
  switch (command.op) {
    case 'query':
      answer(command.id, database.query(command.sql, command.params).then(rowsOf))
      return
    case 'exec':
      answer(command.id, database.exec(command.sql).then(() => ({ rows: [] })))
      return
    case 'begin':
      begin(command.id)
      return
    case 'load':
      answer(command.id, loadRows(command))
      return
    case 'close':
      answer(command.id, (database.closed ? Promise.resolve() : database.close()).then(() => ({ rows: [] })))
      return
    default:
      port.postMessage({ id: command.id, error: { message: `unknown operation ${String(command.op)}` } })
  }
})

function deliver(transaction, command) {
  if (transaction.waiting === undefined) {
    transaction.commands.push(command)
    return
  }
  const wake = transaction.waiting
  transaction.waiting = undefined
  wake(command)
}

port.postMessage({ ready: true })
