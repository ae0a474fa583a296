import type { LightMyRequestResponse } from 'fastify'
import { expect, vi } from 'vitest'
import type { App } from '../../src/app.js'
import type { SqlExecutor } from '../../src/storage/ports.js'

/**
 * Holds the account's row locked (`lock`: FOR UPDATE, FOR NO KEY UPDATE) in a transaction, lets
 * `request` start and waits until it is blocked by that lock in a statement like
 * `waitingStatement` (a LIKE pattern), then does `meanwhile` in the transaction, commits, and
 * answers the request's response. PostgreSQL only: the embedded database runs one statement at a
 * time.
 */
export async function requestWhileHoldingAccount(
  app: App,
  hold: { accountId: string; lock: string; waitingStatement: string },
  request: () => Promise<LightMyRequestResponse>,
  meanwhile: (transaction: SqlExecutor) => Promise<unknown>,
): Promise<LightMyRequestResponse> {
  let pending: Promise<LightMyRequestResponse> | undefined
  await app.database.transaction(async (holding) => {
    await holding.query(`SELECT id FROM accounts WHERE id = $1 ${hold.lock}`, [hold.accountId])
    const [holder] = await holding.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    pending = request()
    await vi.waitFor(async () => {
      // The request waiting on this transaction, not whatever other suites wait on meanwhile.
      const waiting = await app.database.query<{ count: number }>(
        `SELECT count(*)::int4 AS count FROM pg_stat_activity WHERE $2::int = ANY(pg_blocking_pids(pid)) AND query LIKE $1`,
        [hold.waitingStatement, holder?.pid],
      )
      expect(waiting[0]?.count).toBe(1)
    }, { timeout: 5_000, interval: 20 })
    await meanwhile(holding)
  })
  return pending!
}

/**
 * Holds the account's row as DELETE /api/v1/me does (FOR UPDATE, then the account's sites, keys
 * and sessions deleted with it), lets `change` start and wait until it is blocked by that lock,
 * then deletes the account and answers the change's response. A change of the account waits at
 * its first look at the account's row: by default the lock its audit event needs
 * (routes/v1/audit-log/audit-trail.ts, auditedTransaction); a change confirmed by a second factor
 * waits where it takes it (`waitingStatement` '%FOR NO KEY UPDATE%', lockTwoFactor).
 */
export function changeWhileDeletingAccount(
  app: App,
  accountId: string,
  change: () => Promise<LightMyRequestResponse>,
  waitingStatement = '%FROM accounts WHERE id = $1 FOR KEY SHARE%',
): Promise<LightMyRequestResponse> {
  return requestWhileHoldingAccount(app, { accountId, lock: 'FOR UPDATE', waitingStatement }, change, (deletion) =>
    deletion.query('DELETE FROM accounts WHERE id = $1', [accountId]),
  )
}
