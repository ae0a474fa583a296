import { randomUUID } from 'node:crypto'
import { isStorableText } from '../../domain/storable-text.js'
import type { SqlExecutor } from '../ports.js'

export interface Account {
  id: string
  email: string
  createdAt: Date
}

export interface AccountWithPassword extends Account {
  passwordHash: string
  /** When two-factor authentication was turned on (migration 025); null while it is off. */
  twoFactorEnabledAt: Date | null
  /** When the server's operator disabled the account (migration 036); null while it may log in. */
  disabledAt: Date | null
  /**
   * How many times the account's credentials changed (migration 040): what its known-browser
   * cookies sign, so that a change voids every one of them (routes/v1/sessions/known-device.ts).
   */
  credentialEpoch: number
}

interface AccountRow {
  id: string
  email: string
  password_hash: string
  created_at: Date
  totp_enabled_at: Date | null
  disabled_at: Date | null
  credential_epoch: number
}

function toAccount(row: AccountRow): AccountWithPassword {
  return { id: row.id, email: row.email, passwordHash: row.password_hash, createdAt: row.created_at, twoFactorEnabledAt: row.totp_enabled_at, disabledAt: row.disabled_at, credentialEpoch: row.credential_epoch }
}

/** The columns of AccountRow. */
const accountColumns = 'id, email, password_hash, created_at, totp_enabled_at, disabled_at, credential_epoch'

/** Taken while the first account is made (SIGNUPS=first), so that two sign-ups at once take turns. */
const FIRST_ACCOUNT_LOCK_KEY = 74_116_102

/** Operators' accounts. E-mail addresses compare lowercased, matching the unique index. */
export function createAccountRepository(database: SqlExecutor) {
  const repository = {
    /**
     * The new account, or undefined when the address is taken already (in any letter case). It
     * returns the columns every schema since 001 has, so the upgrade tests can make accounts on
     * databases of earlier migrations.
     */
    async create(email: string, passwordHash: string): Promise<Account | undefined> {
      const rows = await database.query<Pick<AccountRow, 'id' | 'email' | 'created_at'>>(
        `INSERT INTO accounts (id, email, password_hash) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING RETURNING id, email, created_at`,
        [randomUUID(), email, passwordHash],
      )
      const row = rows[0]
      return row === undefined ? undefined : { id: row.id, email: row.email, createdAt: row.created_at }
    },

    /**
     * The account, if it is the first: 'accounts_exist' once there is one. To run in a
     * transaction, whose advisory lock makes two first sign-ups at once take turns: the second
     * finds the first's account.
     */
    async createFirst(email: string, passwordHash: string): Promise<Account | 'accounts_exist'> {
      await database.query('SELECT pg_advisory_xact_lock($1)', [FIRST_ACCOUNT_LOCK_KEY])
      if (await repository.exists()) return 'accounts_exist'
      const account = await repository.create(email, passwordHash)
      if (account === undefined) throw new Error('no account exists, yet the address is taken')
      return account
    },

    /**
     * How many accounts were ever created (migration 016; deleted ones included): the first
     * account's setup code changes with it.
     */
    async createdCount(): Promise<number> {
      const rows = await database.query<{ count: number }>('SELECT count FROM accounts_created')
      return rows[0]?.count ?? 0
    },

    /** Whether there is any account at all. */
    async exists(): Promise<boolean> {
      return (await database.query('SELECT 1 FROM accounts LIMIT 1')).length > 0
    },

    async findByEmail(email: string): Promise<AccountWithPassword | undefined> {
      if (!isStorableText(email)) return undefined
      const rows = await database.query<AccountRow>(
        `SELECT ${accountColumns} FROM accounts WHERE lower(email) = lower($1)`,
        [email],
      )
      return rows[0] === undefined ? undefined : toAccount(rows[0])
    },

    /** The account with its password hash, for checking the current password before a change. */
    async findWithPasswordById(id: string): Promise<AccountWithPassword | undefined> {
      const rows = await database.query<AccountRow>(`SELECT ${accountColumns} FROM accounts WHERE id = $1`, [id])
      return rows[0] === undefined ? undefined : toAccount(rows[0])
    },

    /**
     * What has changed since a change to the account was confirmed with the password whose hash
     * was `passwordHash`, from the session `sessionId`: the password (changed meanwhile), the
     * session (ended meanwhile, as a password change ends the others), or the account (gone).
     * Undefined when nothing has. For a transaction that holds the account's row locked.
     */
    async changedSinceConfirmation(id: string, passwordHash: string, sessionId: string): Promise<'account' | 'password' | 'session' | undefined> {
      const rows = await database.query<{ same_password: boolean; session_open: boolean }>(
        `SELECT password_hash = $2 AS same_password,
                EXISTS (SELECT 1 FROM sessions WHERE id = $3 AND account_id = $1 AND expires_at > now()) AS session_open
           FROM accounts WHERE id = $1`,
        [id, passwordHash, sessionId],
      )
      const row = rows[0]
      if (row === undefined) return 'account'
      if (!row.same_password) return 'password'
      return row.session_open ? undefined : 'session'
    },

    /**
     * Replaces the password hash, voiding the account's known-browser cookies: the new credential
     * epoch, or undefined when there is no such account.
     */
    async setPasswordHash(id: string, passwordHash: string): Promise<number | undefined> {
      const rows = await database.query<{ credential_epoch: number }>(
        'UPDATE accounts SET password_hash = $2, credential_epoch = credential_epoch + 1 WHERE id = $1 RETURNING credential_epoch',
        [id, passwordHash],
      )
      return rows[0]?.credential_epoch
    },

    /**
     * Voids every known-browser cookie of the account (its sessions ended everywhere, or everywhere
     * else): copies of one no longer spare anyone its log-in limit from everywhere.
     */
    async forgetKnownBrowsers(id: string): Promise<void> {
      await database.query('UPDATE accounts SET credential_epoch = credential_epoch + 1 WHERE id = $1', [id])
    },

    /** forgetKnownBrowsers for every account at once. */
    async forgetEveryonesKnownBrowsers(): Promise<void> {
      await database.query('UPDATE accounts SET credential_epoch = credential_epoch + 1')
    },

    /**
     * Disables the account (`disabled: true`, from now) or enables it again: false when it has no
     * such account or it was so already. A disabled account cannot log in, and its sessions and
     * API keys are refused (session-repository.ts findByTokenHash, api-key-repository.ts useByKeyHash).
     */
    async setDisabled(id: string, disabled: boolean): Promise<boolean> {
      const rows = await database.query<{ id: string }>(
        `UPDATE accounts SET disabled_at = ${disabled ? 'now()' : 'NULL'}, credential_epoch = credential_epoch + 1 WHERE id = $1 AND (disabled_at IS NULL) = $2 RETURNING id`,
        [id, disabled],
      )
      return rows.length > 0
    },

    /**
     * Deletes the account and with it its sites, sessions, API keys and webhook deliveries (the
     * schema's cascades), after `beforeDeletion` has had the ids of its sites (in id order) to
     * clear what the cascades do not reach; answers those ids. The account's row is locked first,
     * so a site being created for it at the same moment either is among them or fails; the rest
     * is locked in the order a site's own deletion locks it (its stats, then the site), so the
     * two never wait on each other in a cycle.
     */
    async delete(id: string, beforeDeletion: (siteIds: string[]) => Promise<void>): Promise<{ deleted: boolean; siteIds: string[] }> {
      const locked = await database.query<{ id: string }>('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [id])
      if (locked.length === 0) return { deleted: false, siteIds: [] }
      const siteIds = (await database.query<{ id: string }>('SELECT id FROM sites WHERE account_id = $1 ORDER BY id', [id])).map((site) => site.id)
      await beforeDeletion(siteIds)
      await database.query('DELETE FROM accounts WHERE id = $1', [id])
      return { deleted: true, siteIds }
    },

    /**
     * The address as the database compares it (lower() under the database's own collation, which
     * may fold more than JavaScript's toLowerCase: U+0130 "İ" to "i" under C.UTF-8), so that keys
     * derived from it agree with which account an address reaches.
     */
    async foldEmail(email: string): Promise<string> {
      const rows = await database.query<{ folded: string }>('SELECT lower($1) AS folded', [email])
      return rows[0]?.folded ?? email.toLowerCase()
    },

    async findById(id: string): Promise<Account | undefined> {
      const rows = await database.query<Pick<AccountRow, 'id' | 'email' | 'created_at'>>('SELECT id, email, created_at FROM accounts WHERE id = $1', [id])
      const row = rows[0]
      return row === undefined ? undefined : { id: row.id, email: row.email, createdAt: row.created_at }
    },
  }
  return repository
}

export type AccountRepository = ReturnType<typeof createAccountRepository>
