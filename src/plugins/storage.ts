import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { clockOffsetMsOf, clockOffsetWarningOf } from '../storage/clock-offset.js'
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
    /** What the shutdown wrote, by buffer ('verification log rows': 12), for its last log line. */
    writtenAtShutdown: Record<string, number>
  }
}

/** A database restarting or failing over answers again within a few seconds. */
const SHUTDOWN_RETRY_MS = 2_000

/** What writeAtShutdown needs of a buffer. */
export interface ShutdownWrite {
  /** Writes everything the buffer holds. */
  flush(): Promise<void>
  /** Entries not written and not being written. */
  countUnwritten(): number
  /** Entries in a write that has not answered yet (they may land or not). */
  countInFlight(): number
  /** performance.now() when a write of the buffer last landed (0 if none did): a slow flush that lands batch after batch is not silent. */
  lastLandedAt(): number
}

/**
 * Writes what a buffer still holds at shutdown: a failed write is tried again (after 250 ms, then
 * longer) for up to two seconds; a write that lands nothing for two seconds (a database gone
 * silent holds each attempt for its connection timeout, and the shutdown's kill would come first,
 * with nothing said of the loss) is given up, while one that keeps landing batches, however
 * slowly, goes on. What is still unwritten then is logged and recorded in
 * `app.unwrittenAtShutdown`, apart from what a write still in flight may yet have landed. Two
 * buffers (the log and the counters), Siteverify's counts (given one second) and a webhook
 * delivery's 10 s fit in the shutdown's 15 s grace.
 */
export async function writeAtShutdown(app: FastifyInstance, what: string, buffer: ShutdownWrite, retryForMs = SHUTDOWN_RETRY_MS): Promise<void> {
  const started = performance.now()
  const deadline = () => Math.max(started, buffer.lastLandedAt()) + retryForMs
  const pending = buffer.countUnwritten() + buffer.countInFlight()
  for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 1_000)) {
    try {
      await untilSilentPast(buffer.flush(), deadline)
      app.writtenAtShutdown[what] = pending
      return
    } catch (error) {
      if (performance.now() + delayMs <= deadline()) {
        app.log.warn({ err: error, retryInMs: delayMs }, `could not write ${what} at shutdown; trying again`)
        await sleep(delayMs)
        continue
      }
      const unwritten = buffer.countUnwritten()
      const inFlight = buffer.countInFlight()
      if (unwritten + inFlight === 0) return
      const lost = inFlight === 0 ? `${unwritten} lost` : `${unwritten + inFlight} lost, ${inFlight} of them in a write that got no answer and may have landed`
      app.log.error({ err: error, unwritten, inFlight }, `could not write ${what} at shutdown; ${lost}`)
      app.unwrittenAtShutdown.push(`${unwritten + inFlight} ${what}`)
      return
    }
  }
}

/** `work`, or a rejection once the time `deadline()` answers has passed (it may move later meanwhile). */
async function untilSilentPast(work: Promise<void>, deadline: () => number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const silent = new Promise<never>((_resolve, reject) => {
    const check = () => {
      const left = deadline() - performance.now()
      if (left <= 0) reject(new Error('no write landed for 2 s'))
      else timer = setTimeout(check, left)
    }
    check()
  })
  silent.catch(() => {})
  try {
    await Promise.race([work, silent])
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
  app.decorate('writtenAtShutdown', {})
  // An outage told once, when it starts and when it ends (requests failing meanwhile are logged
  // once per interval: app.logFailure).
  const stopWatching = options.storage.keyValue.watchConnection?.((state, detail) => {
    if (state === 'unreachable') app.log.warn(`Redis at ${detail ?? 'REDIS_URL'} is not reachable; retrying: requests that need it, and /ready, answer 503 until it is`)
    else if (state === 'lost') app.log.error('Redis connection lost; requests that need it answer 503 until it is back')
    else if (state === 'refused') app.log.error({ reason: detail }, `Redis refuses the connection: ${detail ?? 'no reason given'}`)
    else app.log.info('Redis connection back')
  })
  const stopWatchingClock = options.storage.keyValue.kind === 'redis' ? watchClockOffset(app) : undefined
  app.addHook('onClose', async () => {
    stopWatching?.()
    stopWatchingClock?.()
    await Promise.allSettled([options.storage.keyValue.close(), options.storage.database.close()])
  })
}

/** How often the instance's clock is compared with Redis's (which the store measures every second). */
const CLOCK_CHECK_MS = 10_000

/**
 * Warns, once when it begins and once when it ends, while this instance's clock is off Redis's by
 * more than half the clock-skew margin: from the start and every CLOCK_CHECK_MS. Returns the way to stop.
 */
function watchClockOffset(app: FastifyInstance): () => void {
  let isWarned = false
  const check = () => {
    const offsetMs = clockOffsetMsOf(app.keyValue)
    const warning = clockOffsetWarningOf(offsetMs)
    if ((warning !== undefined) === isWarned) return
    isWarned = warning !== undefined
    if (warning !== undefined) app.log.warn({ clockOffsetMs: Math.round(offsetMs) }, warning)
    else app.log.info({ clockOffsetMs: Math.round(offsetMs) }, "this instance's clock agrees with Redis's again")
  }
  check()
  const timer = setInterval(check, CLOCK_CHECK_MS)
  timer.unref()
  return () => clearInterval(timer)
}

export default fp(storagePlugin, { name: 'storage' })
