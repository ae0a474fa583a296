import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { KeyValueStore, SqlDatabase, Storage } from '../storage/ports.js'

declare module 'fastify' {
  interface FastifyInstance {
    database: SqlDatabase
    keyValue: KeyValueStore
    /**
     * What the shutdown could not write to the database, one line each ('12 verification log
     * rows'); src/server.ts exits 1 when it is not empty, so that the loss is not a silent one.
     */
    unwrittenAtShutdown: string[]
  }
}

/** A database restarting or failing over answers again within a few seconds. */
const SHUTDOWN_RETRY_MS = 2_000

/**
 * Writes what a buffer still holds at shutdown: a failed write is tried again (after 250 ms, then
 * longer) for up to two seconds; what is still unwritten after that is logged and recorded in
 * `app.unwrittenAtShutdown`. An attempt that gets no answer is given up at the same deadline (a
 * database gone silent holds each for its connection timeout, and the shutdown's kill would come
 * first, with nothing said of the loss). Two buffers and a webhook delivery's 10 s fit in the
 * shutdown's 15 s grace.
 */
export async function writeAtShutdown(
  app: FastifyInstance,
  what: string,
  write: () => Promise<void>,
  countUnwritten: () => number,
  retryForMs = SHUTDOWN_RETRY_MS,
): Promise<void> {
  const deadline = performance.now() + retryForMs
  for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 1_000)) {
    try {
      await withinTime(write(), deadline - performance.now())
      return
    } catch (error) {
      if (performance.now() + delayMs > deadline) {
        const unwritten = countUnwritten()
        app.log.error({ err: error, unwritten }, `could not write ${what} at shutdown; ${unwritten} lost`)
        app.unwrittenAtShutdown.push(`${unwritten} ${what}`)
        return
      }
      app.log.warn({ err: error, retryInMs: delayMs }, `could not write ${what} at shutdown; trying again`)
      await sleep(delayMs)
    }
  }
}

/** `work`, or a rejection once `ms` have passed without its answer. */
async function withinTime(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${Math.round(ms)} ms`)), Math.max(ms, 0))
  })
  try {
    await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Hands the opened stores to the app and closes them last: onClose hooks run in reverse order
 * of registration, so every plugin registered after this one (counters, the verification log)
 * flushes into the database before it closes.
 */
async function storagePlugin(app: FastifyInstance, options: { storage: Storage }): Promise<void> {
  app.decorate('database', options.storage.database)
  options.storage.database.onIncident?.(({ message, error, isRecovered }) => {
    if (isRecovered) app.log.warn(message)
    else app.log.error({ err: error }, message)
  })
  app.decorate('keyValue', options.storage.keyValue)
  app.decorate('unwrittenAtShutdown', [])
  // An outage told once, when it starts and when it ends (requests failing meanwhile are logged
  // once per interval: app.logFailure).
  const stopWatching = options.storage.keyValue.watchConnection?.((state, reason) => {
    if (state === 'lost') app.log.error('Redis connection lost; requests that need it answer 503 until it is back')
    else if (state === 'refused') app.log.error({ reason }, `Redis refuses the connection: ${reason ?? 'no reason given'}`)
    else app.log.info('Redis connection back')
  })
  app.addHook('onClose', async () => {
    stopWatching?.()
    await Promise.allSettled([options.storage.keyValue.close(), options.storage.database.close()])
  })
}

export default fp(storagePlugin, { name: 'storage' })
