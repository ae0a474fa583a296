import { randomUUID } from 'node:crypto'
import type { StoredCredential } from '../../domain/accounts/passkeys.js'
import { isStorableText } from '../../domain/storable-text.js'
import type { SqlExecutor } from '../ports.js'

/** A passkey as its owner's list shows it. */
export interface PasskeyRecord {
  id: string
  name: string
  createdAt: Date
  lastUsedAt: Date | null
}

/** A passkey found by a sign-in's credential id, with the account it logs in to. */
export interface PasskeyOwner extends StoredCredential {
  id: string
  name: string
  accountId: string
}

interface PasskeyRow {
  id: string
  name: string
  created_at: Date
  last_used_at: Date | null
}

const toPasskey = (row: PasskeyRow): PasskeyRecord => ({ id: row.id, name: row.name, createdAt: row.created_at, lastUsedAt: row.last_used_at })

const passkeyColumns = 'id, name, created_at, last_used_at'

/** Passkeys of accounts (migration 029). */
export function createPasskeyRepository(database: SqlExecutor) {
  return {
    async listByAccount(accountId: string): Promise<PasskeyRecord[]> {
      const rows = await database.query<PasskeyRow>(`SELECT ${passkeyColumns} FROM account_passkeys WHERE account_id = $1 ORDER BY created_at, id`, [accountId])
      return rows.map(toPasskey)
    },

    /** The account's credentials, for the registration options' excludeCredentials. */
    async credentialsOf(accountId: string): Promise<Pick<StoredCredential, 'credentialId' | 'transports'>[]> {
      const rows = await database.query<{ credential_id: string; transports: string[] }>(
        'SELECT credential_id, transports FROM account_passkeys WHERE account_id = $1 ORDER BY created_at, id',
        [accountId],
      )
      return rows.map((row) => ({ credentialId: row.credential_id, transports: row.transports }))
    },

    async countByAccount(accountId: string): Promise<number> {
      const rows = await database.query<{ count: number }>('SELECT count(*)::int AS count FROM account_passkeys WHERE account_id = $1', [accountId])
      return rows[0]?.count ?? 0
    },

    /**
     * Stores a new passkey of the account, or answers 'full' when it holds `limit` already and
     * 'taken' when the credential is registered already (to this account or another). The caller
     * holds the account's row locked (withSecondFactor's lockTwoFactor), as every registration of
     * the account does: registrations take turns, and the count sees the one before, so the limit
     * is exact.
     */
    async create(accountId: string, credential: StoredCredential, name: string, limit: number): Promise<PasskeyRecord | 'full' | 'taken'> {
      const rows = await database.query<PasskeyRow>(
        `INSERT INTO account_passkeys (id, account_id, credential_id, public_key, counter, transports, name)
         SELECT $1, $2, $3, $4, $5, $6::text[], $7
          WHERE (SELECT count(*) FROM account_passkeys WHERE account_id = $2) < $8
         ON CONFLICT (credential_id) DO NOTHING
         RETURNING ${passkeyColumns}`,
        [randomUUID(), accountId, credential.credentialId, credential.publicKey, credential.counter, credential.transports, name, limit],
      )
      if (rows[0] !== undefined) return toPasskey(rows[0])
      return (await this.countByAccount(accountId)) >= limit ? 'full' : 'taken'
    },

    /** Renames one of the account's passkeys: its name before, or undefined when it has no such passkey. */
    async rename(accountId: string, id: string, name: string): Promise<{ from: string; passkey: PasskeyRecord } | undefined> {
      const rows = await database.query<PasskeyRow & { previous_name: string }>(
        `WITH previous AS (SELECT id, name FROM account_passkeys WHERE id = $1 AND account_id = $2 FOR UPDATE)
         UPDATE account_passkeys AS renamed SET name = $3 FROM previous WHERE renamed.id = previous.id
         RETURNING renamed.id, renamed.name, renamed.created_at, renamed.last_used_at, previous.name AS previous_name`,
        [id, accountId, name],
      )
      const row = rows[0]
      return row === undefined ? undefined : { from: row.previous_name, passkey: toPasskey(row) }
    },

    /** Deletes one of the account's passkeys: its name, or undefined when it has no such passkey. */
    async delete(accountId: string, id: string): Promise<{ name: string } | undefined> {
      const rows = await database.query<{ name: string }>('DELETE FROM account_passkeys WHERE id = $1 AND account_id = $2 RETURNING name', [id, accountId])
      return rows[0]
    },

    async findById(accountId: string, id: string): Promise<PasskeyRecord | undefined> {
      const rows = await database.query<PasskeyRow>(`SELECT ${passkeyColumns} FROM account_passkeys WHERE id = $1 AND account_id = $2`, [id, accountId])
      return rows[0] === undefined ? undefined : toPasskey(rows[0])
    },

    /** The passkey of a sign-in's credential id, or undefined when none is registered (never, or deleted). */
    async findByCredentialId(credentialId: string): Promise<PasskeyOwner | undefined> {
      if (!isStorableText(credentialId)) return undefined
      const rows = await database.query<{ id: string; name: string; account_id: string; credential_id: string; public_key: string; counter: number; transports: string[] }>(
        `SELECT id, name, account_id, credential_id, public_key, counter::float8 AS counter, transports
           FROM account_passkeys WHERE credential_id = $1`,
        [credentialId],
      )
      const row = rows[0]
      if (row === undefined) return undefined
      return { id: row.id, name: row.name, accountId: row.account_id, credentialId: row.credential_id, publicKey: row.public_key, counter: row.counter, transports: row.transports }
    },

    /**
     * Records a sign-in's counter and when: false when the passkey is gone meanwhile, or another
     * sign-in has stored a counter this one does not exceed (two answers of one counter, one a
     * copy's). An authenticator that keeps no counter sends 0 each time, and stays at 0.
     */
    async recordUse(id: string, newCounter: number): Promise<boolean> {
      const rows = await database.query(
        `UPDATE account_passkeys SET counter = $2, last_used_at = now()
          WHERE id = $1 AND (counter < $2 OR ($2 = 0 AND counter = 0)) RETURNING id`,
        [id, newCounter],
      )
      return rows.length > 0
    },
  }
}

export type PasskeyRepository = ReturnType<typeof createPasskeyRepository>
