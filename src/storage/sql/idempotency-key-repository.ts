import { IDEMPOTENCY_WINDOW_HOURS } from '../../domain/idempotency-key.js'
import type { SqlExecutor } from '../ports.js'

/** Which request of an account's a key belongs to. */
export interface IdempotencyScope {
  accountId: string
  route: string
  key: string
}

/** A key's first request, as committed: its body's hash and its sealed answer. */
export interface StoredIdempotentRequest {
  requestHash: string
  responseCiphertext: string | null
}

const window = `interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`

/** Idempotency keys of the dashboard API's creations (migration 033). */
export function createIdempotencyKeyRepository(database: SqlExecutor) {
  return {
    /**
     * Takes the key for this request, in the caller's transaction: undefined when it is taken (a
     * new key, or one older than the window, which starts afresh), else the first request's row.
     * A first request still in its transaction holds the key's row: the insert waits for it to
     * commit (then answers its row) or roll back (then takes the key), so a retry racing the first
     * request waits for its answer instead of creating a second resource. The row read after a
     * conflict is the committed one: READ COMMITTED reads each statement's own snapshot.
     */
    async claim(scope: IdempotencyScope, requestHash: string): Promise<StoredIdempotentRequest | undefined> {
      const parameters = [scope.accountId, scope.route, scope.key]
      const taken = await database.query(
        `INSERT INTO idempotency_keys (account_id, route, idempotency_key, request_hash) VALUES ($1::uuid, $2, $3, $4)
         ON CONFLICT (account_id, route, idempotency_key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, response_ciphertext = NULL, created_at = now()
           WHERE idempotency_keys.created_at <= now() - ${window}
         RETURNING 1`,
        [...parameters, requestHash],
      )
      if (taken.length > 0) return undefined
      const rows = await database.query<{ request_hash: string; response_ciphertext: string | null }>(
        'SELECT request_hash, response_ciphertext FROM idempotency_keys WHERE account_id = $1::uuid AND route = $2 AND idempotency_key = $3',
        parameters,
      )
      const row = rows[0]
      if (row === undefined) throw new Error('the idempotency key was neither taken nor found')
      return { requestHash: row.request_hash, responseCiphertext: row.response_ciphertext }
    },

    /** Keeps the answer of the request that took the key, in the same transaction. */
    async saveAnswer(scope: IdempotencyScope, responseCiphertext: string): Promise<void> {
      await database.query(
        'UPDATE idempotency_keys SET response_ciphertext = $4 WHERE account_id = $1::uuid AND route = $2 AND idempotency_key = $3',
        [scope.accountId, scope.route, scope.key, responseCiphertext],
      )
    },

    /** Gives the key back (the request failed): a retry, perhaps corrected, is a first request again. */
    async release(scope: IdempotencyScope): Promise<void> {
      await database.query('DELETE FROM idempotency_keys WHERE account_id = $1::uuid AND route = $2 AND idempotency_key = $3', [
        scope.accountId,
        scope.route,
        scope.key,
      ])
    },

    /** Deletes the keys past the window (the retention sweep); answers how many went. */
    async deleteExpired(): Promise<number> {
      return (await database.query(`DELETE FROM idempotency_keys WHERE created_at <= now() - ${window} RETURNING 1`)).length
    },
  }
}
