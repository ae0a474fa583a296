import { randomUUID } from 'node:crypto'
import type { SqlExecutor } from '../ports.js'

export interface SessionAccount {
  sessionId: string
  accountId: string
  email: string
}

/** Server-side sessions, found by the SHA-256 of the cookie's token (never the token itself). */
export function createSessionRepository(database: SqlExecutor) {
  return {
    /**
     * Opens a session for the account while its password is still the one the log-in checked, and
     * in passing drops the account's expired ones. Undefined when the password has changed since
     * (or the account is gone). The account's row is read FOR SHARE: a password change under way
     * (which holds the row) is waited for and then seen, and one that comes after sees this
     * session and ends it with the others.
     */
    async create(account: { id: string; passwordHash: string }, tokenHash: string, expiresAt: Date): Promise<string | undefined> {
      await database.query('DELETE FROM sessions WHERE account_id = $1 AND expires_at <= now()', [account.id])
      const rows = await database.query<{ id: string }>(
        `INSERT INTO sessions (id, account_id, token_hash, expires_at)
         SELECT $1, id, $3, $4 FROM accounts WHERE id = $2 AND password_hash = $5 FOR SHARE
         RETURNING id`,
        [randomUUID(), account.id, tokenHash, expiresAt, account.passwordHash],
      )
      return rows[0]?.id
    },

    /** The live session with this token hash and its account; expired sessions are not found. */
    async findByTokenHash(tokenHash: string): Promise<SessionAccount | undefined> {
      const rows = await database.query<{ session_id: string; account_id: string; email: string }>(
        `SELECT s.id AS session_id, a.id AS account_id, a.email
           FROM sessions s JOIN accounts a ON a.id = s.account_id
          WHERE s.token_hash = $1 AND s.expires_at > now()`,
        [tokenHash],
      )
      const row = rows[0]
      return row === undefined ? undefined : { sessionId: row.session_id, accountId: row.account_id, email: row.email }
    },

    async delete(sessionId: string): Promise<void> {
      await database.query('DELETE FROM sessions WHERE id = $1', [sessionId])
    },

    /** Ends every session of the account but one (a password change keeps the session that made it). */
    async deleteOthers(accountId: string, keptSessionId: string): Promise<number> {
      const rows = await database.query<{ id: string }>('DELETE FROM sessions WHERE account_id = $1 AND id <> $2 RETURNING id', [accountId, keptSessionId])
      return rows.length
    },
  }
}

export type SessionRepository = ReturnType<typeof createSessionRepository>
