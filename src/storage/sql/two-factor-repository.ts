import type { SqlExecutor } from '../ports.js'

/** An account's two-factor authentication, when it is on (migration 025). */
export interface TwoFactorState {
  sealedSecret: string
  enabledAt: Date
  /** The time step of the last authenticator code accepted; null before the first. */
  lastStep: number | null
  recoveryCodesLeft: number
}

interface TwoFactorRow {
  totp_secret_sealed: string
  totp_enabled_at: Date
  totp_last_step: number | null
  recovery_codes_left: number
}

/** Two-factor authentication of accounts: the sealed TOTP secret, its last step, the recovery codes. */
export function createTwoFactorRepository(database: SqlExecutor) {
  const insertRecoveryCodes = (accountId: string, codeHashes: string[]) =>
    database.query('INSERT INTO account_recovery_codes (account_id, code_hash) SELECT $1, unnest($2::text[])', [accountId, codeHashes])

  return {
    /** Whether the account has two-factor authentication on (false when there is no such account). */
    async isEnabled(accountId: string): Promise<boolean> {
      const rows = await database.query('SELECT 1 FROM accounts WHERE id = $1 AND totp_enabled_at IS NOT NULL', [accountId])
      return rows.length > 0
    },

    /** The account's two-factor state, or undefined when it is off (or there is no such account). */
    async stateOf(accountId: string): Promise<TwoFactorState | undefined> {
      const rows = await database.query<TwoFactorRow>(
        `SELECT totp_secret_sealed, totp_enabled_at, totp_last_step,
                (SELECT count(*)::int FROM account_recovery_codes WHERE account_id = accounts.id AND used_at IS NULL) AS recovery_codes_left
         FROM accounts WHERE id = $1 AND totp_enabled_at IS NOT NULL`,
        [accountId],
      )
      const row = rows[0]
      if (row === undefined) return undefined
      return { sealedSecret: row.totp_secret_sealed, enabledAt: row.totp_enabled_at, lastStep: row.totp_last_step, recoveryCodesLeft: row.recovery_codes_left }
    },

    /**
     * The account's sealed secret when two-factor is on, in a transaction that takes a code: the
     * account's row is locked (FOR NO KEY UPDATE, whether two-factor is on or not) until the
     * transaction ends, so that two-factor turned on or off meanwhile waits for it (which decided
     * from what it saw) instead of letting it through on a state gone by, and the transactions
     * that take codes of one account, and change its codes, lock the account first and take turns
     * instead of waiting on each other's code rows. Null while two-factor is off; undefined when
     * the account is gone. `forDeletion` locks FOR UPDATE, as the account's deletion goes on to, so
     * that changes of the account (auditedTransaction's FOR KEY SHARE) wait from the start instead
     * of slipping in while the deletion strengthens its lock.
     */
    async lockTwoFactor(accountId: string, forDeletion = false): Promise<Pick<TwoFactorState, 'sealedSecret' | 'enabledAt'> | null | undefined> {
      const rows = await database.query<{ totp_secret_sealed: string | null; totp_enabled_at: Date | null }>(
        `SELECT totp_secret_sealed, totp_enabled_at FROM accounts WHERE id = $1 ${forDeletion ? 'FOR UPDATE' : 'FOR NO KEY UPDATE'}`,
        [accountId],
      )
      const row = rows[0]
      if (row === undefined) return undefined
      if (row.totp_secret_sealed === null || row.totp_enabled_at === null) return null
      return { sealedSecret: row.totp_secret_sealed, enabledAt: row.totp_enabled_at }
    },

    /**
     * Turns two-factor on with its secret, the step of the code that confirmed it (not to be
     * accepted again) and the recovery codes' hashes: when it went on, or undefined when it was on
     * already.
     */
    async enable(accountId: string, sealedSecret: string, confirmedStep: number, recoveryCodeHashes: string[]): Promise<Date | undefined> {
      const rows = await database.query<{ totp_enabled_at: Date }>(
        `UPDATE accounts SET totp_secret_sealed = $2, totp_enabled_at = now(), totp_last_step = $3
         WHERE id = $1 AND totp_enabled_at IS NULL RETURNING totp_enabled_at`,
        [accountId, sealedSecret, confirmedStep],
      )
      if (rows[0] === undefined) return undefined
      await database.query('DELETE FROM account_recovery_codes WHERE account_id = $1', [accountId])
      await insertRecoveryCodes(accountId, recoveryCodeHashes)
      return rows[0].totp_enabled_at
    },

    /** Turns two-factor off, forgetting the secret and the recovery codes; false when it was off. */
    async disable(accountId: string): Promise<boolean> {
      const rows = await database.query(
        `UPDATE accounts SET totp_secret_sealed = NULL, totp_enabled_at = NULL, totp_last_step = NULL
         WHERE id = $1 AND totp_enabled_at IS NOT NULL RETURNING id`,
        [accountId],
      )
      await database.query('DELETE FROM account_recovery_codes WHERE account_id = $1', [accountId])
      return rows.length > 0
    },

    /**
     * Takes an authenticator code's time step: true once per step and only for a step after the
     * last one taken, so a code cannot be used twice, not even by two requests at once.
     */
    async takeStep(accountId: string, step: number): Promise<boolean> {
      const rows = await database.query(
        `UPDATE accounts SET totp_last_step = $2
         WHERE id = $1 AND totp_enabled_at IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < $2) RETURNING id`,
        [accountId, step],
      )
      return rows.length > 0
    },

    /** Uses up a recovery code: the codes left after it, or undefined when it is not an unused code of the account. */
    async takeRecoveryCode(accountId: string, codeHash: string): Promise<number | undefined> {
      const used = await database.query(
        'UPDATE account_recovery_codes SET used_at = now() WHERE account_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING code_hash',
        [accountId, codeHash],
      )
      if (used.length === 0) return undefined
      const rows = await database.query<{ left: number }>(
        'SELECT count(*)::int AS left FROM account_recovery_codes WHERE account_id = $1 AND used_at IS NULL',
        [accountId],
      )
      return rows[0]?.left ?? 0
    },

    /** Replaces every recovery code of the account, used or not. */
    async replaceRecoveryCodes(accountId: string, recoveryCodeHashes: string[]): Promise<void> {
      await database.query('DELETE FROM account_recovery_codes WHERE account_id = $1', [accountId])
      await insertRecoveryCodes(accountId, recoveryCodeHashes)
    },

    /** Every account's sealed secret, locked until the transaction ends (to seal them again under a new server secret). */
    lockSealedSecrets(): Promise<{ id: string; totp_secret_sealed: string }[]> {
      return database.query('SELECT id, totp_secret_sealed FROM accounts WHERE totp_secret_sealed IS NOT NULL ORDER BY id FOR UPDATE')
    },

    async reseal(accountId: string, sealedSecret: string): Promise<void> {
      await database.query('UPDATE accounts SET totp_secret_sealed = $2 WHERE id = $1', [accountId, sealedSecret])
    },
  }
}

export type TwoFactorRepository = ReturnType<typeof createTwoFactorRepository>
