import { expect, vi } from 'vitest'
import type { App } from '../../src/app.js'
import type { SqlExecutor } from '../../src/storage/ports.js'

export interface PausedTransaction {
  /** The paused transaction's backend process id, once it has reached the statement. */
  reached: Promise<number>
  /** Lets the transaction run the statement and go on. */
  resume(): void
}

/**
 * Pauses the app's next transaction that runs a statement matching `statement` just before that
 * statement (its locks so far held) until resume(): an interleaving of two requests, set up in
 * the order a race could take. PostgreSQL only: the embedded database runs one transaction at a
 * time, so a second request would wait for the paused one for ever.
 */
export function pauseTransactionAt(app: App, statement: RegExp): PausedTransaction {
  const database = app.database
  const transaction = database.transaction.bind(database)
  let signalReached!: (pid: number) => void
  const reached = new Promise<number>((resolve) => (signalReached = resolve))
  let resume!: () => void
  const resumed = new Promise<void>((resolve) => (resume = resolve))
  let isTaken = false
  const pausing = (executor: SqlExecutor): SqlExecutor => ({
    async query<Row extends object>(sql: string, params?: readonly unknown[]): Promise<Row[]> {
      if (!isTaken && statement.test(sql)) {
        isTaken = true
        const [backend] = await executor.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
        signalReached(backend?.pid ?? 0)
        await resumed
      }
      return executor.query<Row>(sql, params)
    },
  })
  const spy = vi
    .spyOn(database, 'transaction')
    .mockImplementation((work, options) => transaction((executor) => work(pausing(executor)), options))
  return {
    reached,
    resume() {
      spy.mockRestore()
      resume()
    },
  }
}

export interface HeldTransactions {
  /**
   * Fulfilled once all `count` transactions were asked for and let go together; rejected, saying
   * how many came, when fewer did within the time allowed or restore() came first.
   */
  released: Promise<void>
  /** Puts the app's transaction back (once all were let go, or to give up): call it in a finally. */
  restore(): void
}

/**
 * Holds the app's next `count` transactions until all of them have been asked for, then lets them
 * all start: requests that race are each past whatever they read before their transaction when
 * any of them writes. On either database: the held transactions have not begun, so the embedded
 * one's turn-taking does not wait on them. When fewer than `count` come within `timeoutMs` (a
 * request that no longer gets that far), the held ones are refused with the reason and the spy is
 * removed, so that the test fails saying so rather than timing out, and later tests are not held.
 */
export function holdTransactionsTogether(app: App, count: number, timeoutMs = 5_000): HeldTransactions {
  const database = app.database
  const transaction = database.transaction.bind(database)
  let release!: () => void
  let refuse!: (reason: Error) => void
  const released = new Promise<void>((resolve, reject) => {
    release = resolve
    refuse = reject
  })
  // Awaited by the held transactions and by the test, perhaps after it is refused: not unhandled meanwhile.
  released.catch(() => undefined)
  let asked = 0
  let isRestored = false
  const spy = vi.spyOn(database, 'transaction').mockImplementation(async (work, options) => {
    asked += 1
    if (asked === count) {
      restore()
      release()
    }
    await released
    return transaction(work, options)
  })
  const timer = setTimeout(() => giveUp(`within ${timeoutMs} ms`), timeoutMs)
  function restore(): void {
    if (isRestored) return
    isRestored = true
    clearTimeout(timer)
    spy.mockRestore()
  }
  function giveUp(when: string): void {
    restore()
    refuse(new Error(`${asked} of the ${count} transactions to hold together were asked for ${when}; the held ones were refused`))
  }
  return { released, restore: () => giveUp('before restore()') }
}

/**
 * Waits until `count` statements like `waitingStatement` (a LIKE pattern) wait for a lock that the
 * backend `pid` holds, directly or behind another waiter for it (PostgreSQL queues the waiters
 * for one row behind the first).
 */
export async function waitUntilBlockedBy(app: App, pid: number, waitingStatement: string, count = 1): Promise<void> {
  await vi.waitFor(async () => {
    const waiting = await app.database.query<{ count: number }>(
      `SELECT count(*)::int4 AS count FROM pg_stat_activity waiter
        WHERE waiter.query LIKE $1
          AND ($2::int = ANY(pg_blocking_pids(waiter.pid))
               OR EXISTS (SELECT 1 FROM unnest(pg_blocking_pids(waiter.pid)) ahead WHERE $2::int = ANY(pg_blocking_pids(ahead))))`,
      [waitingStatement, pid],
    )
    expect(waiting[0]?.count).toBe(count)
  }, { timeout: 5_000, interval: 20 })
}

/**
 * A race set up in one order: `first` runs until its transaction reaches `statement`, then
 * `second` starts and is waited for until it waits for a lock `first` holds (its statement like
 * `waitingStatement`), then both go on. Answers both outcomes, `first`'s first.
 */
export async function runBehind<First, Second>(
  app: App,
  statement: RegExp,
  first: () => Promise<First>,
  second: () => Promise<Second>,
  waitingStatement = '%FROM sites WHERE id = $1%',
): Promise<[First, Second]> {
  const pause = pauseTransactionAt(app, statement)
  const running = first()
  const pid = await pause.reached
  const waiting = second()
  await waitUntilBlockedBy(app, pid, waitingStatement)
  pause.resume()
  return Promise.all([running, waiting])
}
