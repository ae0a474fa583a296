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
    /** Opens a session and, in passing, drops the account's expired ones. */
    async create(accountId: string, tokenHash: string, expiresAt: Date): Promise<string> {
      const id = randomUUID()
      await database.query('DELETE FROM sessions WHERE account_id = $1 AND expires_at <= now()', [accountId])
      await database.query('INSERT INTO sessions (id, account_id, token_hash, expires_at) VALUES ($1, $2, $3, $4)', [
        id,
        accountId,
        tokenHash,
        expiresAt,
      ])
      return id
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
