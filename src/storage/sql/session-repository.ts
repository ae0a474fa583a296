import { randomUUID } from 'node:crypto'
import type { SqlExecutor } from '../ports.js'

export interface SessionAccount {
  sessionId: string
  accountId: string
  email: string
}

/** Where a session was opened: as the log-in request said. */
export interface SessionOrigin {
  userAgent: string | null
  clientIp: string | null
}

export interface SessionRecord extends SessionOrigin {
  id: string
  createdAt: Date
  expiresAt: Date
  lastSeenAt: Date | null
}

interface SessionRow {
  id: string
  created_at: Date
  expires_at: Date
  last_seen_at: Date | null
  user_agent: string | null
  client_ip: string | null
}

/** How finely last use is kept: a write at most once a minute per session, not one per request. */
const LAST_SEEN_RESOLUTION = '1 minute'

/** The most sessions a list answers (the newest); logging in drops an account's expired ones. */
export const MAX_LISTED_SESSIONS = 100

const MAX_USER_AGENT_LENGTH = 512

/** Server-side sessions, found by the SHA-256 of the cookie's token (never the token itself). */
export function createSessionRepository(database: SqlExecutor) {
  return {
    /**
     * Opens a session for the account while its password is still the one the log-in checked, and
     * in passing drops the account's expired ones. Undefined when the password has changed since
     * (or the account is gone). The account's row is read FOR SHARE: a password change under way
     * (which holds the row) is waited for and then seen, and one that comes after sees this
     * session and ends it with the others. Undefined too for a disabled account (migration 036),
     * its row read as locked, so an operator's `disable` either comes after and ends this session
     * or comes before and prevents it. `passkeyId` names the passkey a passkey sign-in opened
     * it with: its removal ends the session.
     */
    async create(
      account: { id: string; passwordHash: string },
      tokenHash: string,
      expiresAt: Date,
      origin: SessionOrigin = { userAgent: null, clientIp: null },
      passkeyId: string | null = null,
    ): Promise<string | undefined> {
      await database.query('DELETE FROM sessions WHERE account_id = $1 AND expires_at <= now()', [account.id])
      const rows = await database.query<{ id: string }>(
        `INSERT INTO sessions (id, account_id, token_hash, expires_at, user_agent, client_ip, last_seen_at, passkey_id)
         SELECT $1, id, $3, $4, $6, $7, now(), $8 FROM accounts WHERE id = $2 AND password_hash = $5 AND disabled_at IS NULL FOR SHARE
         RETURNING id`,
        [randomUUID(), account.id, tokenHash, expiresAt, account.passwordHash, origin.userAgent?.slice(0, MAX_USER_AGENT_LENGTH) ?? null, origin.clientIp, passkeyId],
      )
      return rows[0]?.id
    },

    /** The account's live sessions, the most recently used first (at most MAX_LISTED_SESSIONS). */
    async listByAccount(accountId: string): Promise<SessionRecord[]> {
      const rows = await database.query<SessionRow>(
        `SELECT id, created_at, expires_at, last_seen_at, user_agent, client_ip FROM sessions
          WHERE account_id = $1 AND expires_at > now()
          ORDER BY coalesce(last_seen_at, created_at) DESC, id LIMIT ${MAX_LISTED_SESSIONS}`,
        [accountId],
      )
      return rows.map((row) => ({
        id: row.id,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        lastSeenAt: row.last_seen_at,
        userAgent: row.user_agent,
        clientIp: row.client_ip,
      }))
    },

    /** Deletes every expired session (with the address and User-Agent it kept); answers how many. */
    async deleteExpired(): Promise<number> {
      return (await database.query<{ id: string }>('DELETE FROM sessions WHERE expires_at <= now() RETURNING id')).length
    },

    /** Ends one of the account's sessions; false when it has no such session. */
    async deleteOfAccount(accountId: string, sessionId: string): Promise<boolean> {
      const rows = await database.query<{ id: string }>('DELETE FROM sessions WHERE id = $1 AND account_id = $2 RETURNING id', [sessionId, accountId])
      return rows.length > 0
    },

    /**
     * The live session with this token hash and its account; expired sessions, those unused for
     * `idleTimeoutMs` (SESSION_IDLE_TIMEOUT: its last use is known to the minute, so it ends up to
     * a minute later) and those of a disabled account (migration 036: ended when it was disabled,
     * refused here all the same) are not found.
     */
    async findByTokenHash(tokenHash: string, idleTimeoutMs: number): Promise<SessionAccount | undefined> {
      // Last use, to the minute, judged by the database's clock (the one that writes it): most
      // requests find it recent and write nothing.
      const rows = await database.query<{ session_id: string; account_id: string; email: string; is_stale: boolean }>(
        `SELECT s.id AS session_id, a.id AS account_id, a.email,
                (s.last_seen_at IS NULL OR s.last_seen_at <= now() - interval '${LAST_SEEN_RESOLUTION}') AS is_stale
           FROM sessions s JOIN accounts a ON a.id = s.account_id
          WHERE s.token_hash = $1 AND s.expires_at > now() AND a.disabled_at IS NULL
            AND coalesce(s.last_seen_at, s.created_at) > now() - $2 * interval '1 millisecond'`,
        [tokenHash, idleTimeoutMs],
      )
      const row = rows[0]
      if (row === undefined) return undefined
      if (row.is_stale) await database.query('UPDATE sessions SET last_seen_at = now() WHERE id = $1', [row.session_id])
      return { sessionId: row.session_id, accountId: row.account_id, email: row.email }
    },

    async delete(sessionId: string): Promise<void> {
      await database.query('DELETE FROM sessions WHERE id = $1', [sessionId])
    },

    /** Ends every session of the account (a password set by its operator, `npm run account`). */
    async deleteAllOf(accountId: string): Promise<number> {
      return (await database.query<{ id: string }>('DELETE FROM sessions WHERE account_id = $1 RETURNING id', [accountId])).length
    },

    /** Ends every session of every account (the operator's end-sessions --all): how many each account had. */
    async deleteEveryone(): Promise<{ accountId: string; ended: number }[]> {
      return database.query<{ accountId: string; ended: number }>(
        `WITH ended AS (DELETE FROM sessions RETURNING account_id)
         SELECT account_id AS "accountId", count(*)::int AS ended FROM ended GROUP BY account_id ORDER BY account_id`,
      )
    },

    /** Ends the account's sessions opened with one of its passkeys (the passkey being removed): how many. */
    async deleteOpenedWithPasskey(accountId: string, passkeyId: string): Promise<number> {
      return (await database.query<{ id: string }>('DELETE FROM sessions WHERE account_id = $1 AND passkey_id = $2 RETURNING id', [accountId, passkeyId])).length
    },

    /** Ends every session of the account but one (a password change keeps the session that made it). */
    async deleteOthers(accountId: string, keptSessionId: string): Promise<number> {
      const rows = await database.query<{ id: string }>('DELETE FROM sessions WHERE account_id = $1 AND id <> $2 RETURNING id', [accountId, keptSessionId])
      return rows.length
    },
  }
}

export type SessionRepository = ReturnType<typeof createSessionRepository>
