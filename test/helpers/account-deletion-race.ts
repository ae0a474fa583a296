import type { LightMyRequestResponse } from 'fastify'
import { expect, vi } from 'vitest'
import type { App } from '../../src/app.js'

/**
 * Holds the account's row as DELETE /api/v1/me does (FOR UPDATE, then the account's sites, keys
 * and sessions deleted with it), lets `change` start and wait until it is blocked by that lock,
 * then deletes the account and answers the change's response. PostgreSQL only: the embedded
 * database runs one statement at a time. A change of the account waits at its first look at the
 * account's row: the lock its audit event needs (routes/v1/audit-log/audit-trail.ts,
 * auditedTransaction).
 */
export async function changeWhileDeletingAccount(app: App, accountId: string, change: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  let pending: Promise<LightMyRequestResponse> | undefined
  await app.database.transaction(async (deletion) => {
    await deletion.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId])
    const [holder] = await deletion.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    pending = change()
    await vi.waitFor(async () => {
      // The change waiting on this transaction, not whatever other suites wait on meanwhile.
      const waiting = await app.database.query<{ count: number }>(
        `SELECT count(*)::int4 AS count FROM pg_stat_activity WHERE $2::int = ANY(pg_blocking_pids(pid)) AND query LIKE $1`,
        ['%FROM accounts WHERE id = $1 FOR KEY SHARE%', holder?.pid],
      )
      expect(waiting[0]?.count).toBe(1)
    }, { timeout: 5_000, interval: 20 })
    await deletion.query('DELETE FROM accounts WHERE id = $1', [accountId])
  })
  return pending!
}
