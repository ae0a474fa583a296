import { randomUUID } from 'node:crypto'
import type { ApiKeyAccess } from '../../domain/accounts/api-key-access.js'
import { isApiKeyUsableFrom } from '../../domain/accounts/api-key-addresses.js'
import type { SqlExecutor } from '../ports.js'

export interface ApiKeyRecord {
  id: string
  name: string
  prefix: string
  access: ApiKeyAccess
  /** The sites the key may reach (those the account still reaches of them); null: every site of the account. */
  siteIds: string[] | null
  /** The addresses and ranges (canonical) the key may be used from; null: any. */
  allowedAddresses: string[] | null
  /** Null: never. */
  expiresAt: Date | null
  /** Whether expiresAt has passed by the database's clock, which judges the key's uses. */
  expired: boolean
  createdAt: Date
  lastUsedAt: Date | null
}

interface ApiKeyRow {
  id: string
  name: string
  prefix: string
  access: ApiKeyAccess
  site_ids: string[] | null
  allowed_addresses: string[] | null
  expires_at: Date | null
  expired: boolean
  created_at: Date
  last_used_at: Date | null
}

const apiKeyColumns = 'id, name, prefix, access, site_ids, allowed_addresses, expires_at, expires_at IS NOT NULL AND expires_at <= now() AS expired, created_at, last_used_at'

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return { id: row.id, name: row.name, prefix: row.prefix, access: row.access, siteIds: row.site_ids, allowedAddresses: row.allowed_addresses, expiresAt: row.expires_at, expired: row.expired, createdAt: row.created_at, lastUsedAt: row.last_used_at }
}

/** A key as its use reads it: its terms, whether it has expired, and its account. */
type KeyUseRow = Omit<ApiKeyRow, 'expired' | 'created_at' | 'last_used_at'> & { is_expired: boolean; account_id: string; email: string; is_disabled: boolean }

/** What a presented key turned out to be (an unknown or revoked one is undefined). */
export type ApiKeyUse =
  | { outcome: 'used'; apiKeyId: string; name: string; prefix: string; access: ApiKeyAccess; siteIds: string[] | null; accountId: string; email: string }
  | { outcome: 'expired'; expiresAt: Date }
  /** The key's account was disabled by the server's operator (migration 036): refused, not recorded as a use. */
  | { outcome: 'account_disabled' }
  /** The request came from an address the key's list does not hold: refused, not recorded as a use. */
  | { outcome: 'address_refused'; apiKeyId: string; name: string; prefix: string; accountId: string; email: string }

/** Recording every use would write on every API call; once a minute is precise enough for people. */
const LAST_USED_RESOLUTION = '1 minute'

/** API keys, found by the SHA-256 of the presented key. */
export function createApiKeyRepository(database: SqlExecutor) {
  return {
    /**
     * Creates a key, or answers undefined when the account holds `limit` keys already or is gone
     * (an account being deleted is waited for: its row is read FOR KEY SHARE), or when its expiry
     * is not in the future by the database's clock, which judges its uses (isPast tells which).
     */
    async create(
      accountId: string,
      key: { name: string; prefix: string; keyHash: string; access: ApiKeyAccess; siteIds?: readonly string[] | null; allowedAddresses?: readonly string[] | null; expiresAt: Date | null },
      limit: number,
    ): Promise<ApiKeyRecord | undefined> {
      // One statement: the count and the insert see the same snapshot. Creations racing on one
      // account may pass the limit by the few that raced; it bounds a list, it guards no secret.
      const rows = await database.query<ApiKeyRow>(
        `INSERT INTO api_keys (id, account_id, name, prefix, key_hash, access, expires_at, site_ids, allowed_addresses)
         SELECT $1, accounts.id, $3, $4, $5, $7, $8, $9::uuid[], $10::text[] FROM accounts
          WHERE accounts.id = $2 AND (SELECT count(*) FROM api_keys WHERE account_id = $2) < $6
            AND ($8::timestamptz IS NULL OR $8::timestamptz > now())
            FOR KEY SHARE OF accounts
         RETURNING ${apiKeyColumns}`,
        [randomUUID(), accountId, key.name, key.prefix, key.keyHash, limit, key.access, key.expiresAt, key.siteIds ?? null, key.allowedAddresses ?? null],
      )
      return rows[0] === undefined ? undefined : toApiKey(rows[0])
    },

    /** Whether the database's clock (in this transaction, its start) has reached `time`: an expiry create refused. */
    async isPast(time: Date): Promise<boolean> {
      const [judged] = await database.query<{ is_past: boolean }>('SELECT $1::timestamptz <= now() AS is_past', [time])
      return judged?.is_past === true
    },

    /** How many keys the account holds, expired ones included (they are listed until revoked). */
    async countByAccount(accountId: string): Promise<number> {
      const rows = await database.query<{ count: number }>('SELECT count(*)::int AS count FROM api_keys WHERE account_id = $1', [accountId])
      return rows[0]?.count ?? 0
    },

    async listByAccount(accountId: string): Promise<ApiKeyRecord[]> {
      const rows = await database.query<ApiKeyRow>(
        `SELECT ${apiKeyColumns} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
        [accountId],
      )
      return rows.map(toApiKey)
    },

    /**
     * The key's owner and what it may do (and records the use), when it has not expired by the
     * database's clock (one clock for every instance) and may be used from `clientIp`; undefined
     * for an unknown or revoked key. An expired key's attempts, and those from an address its list
     * does not hold, are not recorded as uses: its list shows when it last worked.
     */
    async useByKeyHash(keyHash: string, clientIp: string): Promise<ApiKeyUse | undefined> {
      const rows = await database.query<KeyUseRow>(
        `SELECT k.id, k.name, k.prefix, k.access, k.site_ids, k.allowed_addresses, k.expires_at, k.expires_at IS NOT NULL AND k.expires_at <= now() AS is_expired, k.account_id, a.email,
                a.disabled_at IS NOT NULL AS is_disabled
           FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = $1`,
        [keyHash],
      )
      const row = rows[0]
      if (row === undefined) return undefined
      if (row.is_disabled) return { outcome: 'account_disabled' }
      if (row.is_expired && row.expires_at !== null) return { outcome: 'expired', expiresAt: row.expires_at }
      if (!isApiKeyUsableFrom(row.allowed_addresses, clientIp)) {
        return { outcome: 'address_refused', apiKeyId: row.id, name: row.name, prefix: row.prefix, accountId: row.account_id, email: row.email }
      }
      await database.query(
        `UPDATE api_keys SET last_used_at = now()
          WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '${LAST_USED_RESOLUTION}')
            AND (expires_at IS NULL OR expires_at > now())`,
        [row.id],
      )
      return { outcome: 'used', apiKeyId: row.id, name: row.name, prefix: row.prefix, access: row.access, siteIds: row.site_ids, accountId: row.account_id, email: row.email }
    },

    /** One of the account's keys, its row locked until the transaction ends: an edit is judged against it. */
    async findForUpdate(accountId: string, id: string): Promise<ApiKeyRecord | undefined> {
      const rows = await database.query<ApiKeyRow>(`SELECT ${apiKeyColumns} FROM api_keys WHERE id = $1 AND account_id = $2 FOR UPDATE`, [id, accountId])
      return rows[0] === undefined ? undefined : toApiKey(rows[0])
    },

    /**
     * Sets one of the account's keys' name and terms (its secret stays): the key as it is now, or
     * undefined when the account has no such key or when its expiry is not in the future by the
     * database's clock (isPast tells which). The next request with the key reads them.
     */
    async update(
      accountId: string,
      id: string,
      key: { name: string; access: ApiKeyAccess; siteIds: readonly string[] | null; allowedAddresses: readonly string[] | null; expiresAt: Date | null },
    ): Promise<ApiKeyRecord | undefined> {
      const rows = await database.query<ApiKeyRow>(
        `UPDATE api_keys SET name = $3, access = $4, site_ids = $5::uuid[], expires_at = $6, allowed_addresses = $7::text[]
          WHERE id = $1 AND account_id = $2 AND ($6::timestamptz IS NULL OR $6::timestamptz > now())
         RETURNING ${apiKeyColumns}`,
        [id, accountId, key.name, key.access, key.siteIds, key.expiresAt, key.allowedAddresses],
      )
      return rows[0] === undefined ? undefined : toApiKey(rows[0])
    },

    /** Revokes one of the account's keys: its name and prefix, or undefined when it has no such key. */
    async delete(accountId: string, id: string): Promise<{ name: string; prefix: string } | undefined> {
      const rows = await database.query<{ name: string; prefix: string }>('DELETE FROM api_keys WHERE id = $1 AND account_id = $2 RETURNING name, prefix', [
        id,
        accountId,
      ])
      return rows[0]
    },
  }
}

export type ApiKeyRepository = ReturnType<typeof createApiKeyRepository>
