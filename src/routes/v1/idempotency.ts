import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { findIdempotencyKeyProblem, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_WINDOW_HOURS, requestHashOf } from '../../domain/idempotency-key.js'
import { isSameInConstantTime } from '../../domain/mac.js'
import { decryptSecret, encryptSecret } from '../../domain/secret-box.js'
import { ApiError, invalidRequest } from '../../errors.js'
import { accountOf } from '../../plugins/authentication.js'
import type { SqlExecutor } from '../../storage/ports.js'
import { createIdempotencyKeyRepository, type IdempotencyScope, type StoredIdempotentRequest } from '../../storage/sql/idempotency-key-repository.js'

/** An answer as it is sent, and replayed: status, the headers that matter, body. */
export interface IdempotentAnswer<Body> {
  statusCode: number
  headers: Record<string, string>
  body: Body
}

/** What a creation answers: its own answer, or the first answer of the key's earlier request. */
export type IdempotentOutcome<Body> = { answer: IdempotentAnswer<Body>; isReplayed: boolean }

/** The request header, for a route's schema (the document). */
export const idempotencyKeyHeader = {
  'idempotency-key': Type.Optional(
    Type.String({
      description: `Makes the request safe to retry (1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters; a UUID per creation): for ${IDEMPOTENCY_WINDOW_HOURS} hours, a request of this account with this key and the same body answers the first one's answer again, secret included, with Idempotent-Replayed: true, and creates nothing; another body is a 422 idempotency_key_reused. A retry sent while the first request is under way waits for its answer. A first request that failed (4xx) keeps nothing: correct it and send it again with the same key.`,
    }),
  ),
}

/** The answer header that marks a replay, for a route's responseHeaders (the document). */
export const replayedHeader = {
  'Idempotent-Replayed': { type: 'string', description: 'true when this is the stored answer of an earlier request with the same Idempotency-Key' },
} as const

export interface Idempotency {
  scope: IdempotencyScope
  requestHash: string
}

/**
 * The request's Idempotency-Key, scoped to its account and `route` (undefined without the header),
 * or a 400 validation_error naming the header when it cannot be a key.
 */
export function idempotencyOf(app: FastifyInstance, request: FastifyRequest, route: string): Idempotency | undefined {
  const header = request.headers['idempotency-key']
  if (header === undefined) return undefined
  // Sent twice, the header is two keys: joined, as a proxy would, they are one no client meant.
  const key = [header].flat().join(', ')
  const problem = findIdempotencyKeyProblem(key)
  if (problem !== undefined) throw invalidRequest([{ field: 'Idempotency-Key', message: problem }])
  return { scope: { accountId: accountOf(request).id, route, key }, requestHash: requestHashOf(app.keyRing.macKeyFor('idempotency-hash'), request.body) }
}

/** The sealed answer is bound to its account, route and key: a ciphertext copied to another row does not open. */
const contextOf = (scope: IdempotencyScope) => `idempotency ${scope.accountId} ${scope.route} ${scope.key}`

/** The first request's answer for a retry of it; 422 for another body under its key. */
function replayOf<Body>(app: FastifyInstance, { scope, requestHash }: Idempotency, earlier: StoredIdempotentRequest): IdempotentOutcome<Body> {
  if (!isSameInConstantTime(Buffer.from(earlier.requestHash), Buffer.from(requestHash))) throw new ApiError('idempotency_key_reused')
  // A row is only ever committed with its answer (taken and saved in one transaction).
  if (earlier.responseCiphertext === null) throw new Error('an idempotency key was committed without its answer')
  const opened = decryptSecret(app.keyRing.keyFor('idempotency-answer'), earlier.responseCiphertext, contextOf(scope))
  return { answer: JSON.parse(opened) as IdempotentAnswer<Body>, isReplayed: true }
}

/**
 * Runs `create` in `transaction` once per Idempotency-Key: the key is taken first, and the answer
 * kept, sealed (it holds a one-time secret), in the same transaction as what `create` writes, so a
 * key never names a resource that was rolled back, nor a committed resource lack its answer. A key
 * taken already answers its first answer, or 422 for another body. `create` answering undefined
 * (a refusal the caller turns into a 4xx) gives the key back.
 */
export async function createOnce<Body>(
  app: FastifyInstance,
  transaction: SqlExecutor,
  idempotency: Idempotency | undefined,
  create: () => Promise<IdempotentAnswer<Body> | undefined>,
): Promise<IdempotentOutcome<Body> | undefined> {
  if (idempotency === undefined) {
    const answer = await create()
    return answer === undefined ? undefined : { answer, isReplayed: false }
  }
  const keys = createIdempotencyKeyRepository(transaction)
  const { scope } = idempotency
  const earlier = await keys.claim(scope, idempotency.requestHash)
  if (earlier !== undefined) return replayOf<Body>(app, idempotency, earlier)
  const answer = await create()
  if (answer === undefined) await keys.release(scope)
  else await keys.saveAnswer(scope, encryptSecret(app.keyRing.keyFor('idempotency-answer'), JSON.stringify(answer), contextOf(scope)))
  return answer === undefined ? undefined : { answer, isReplayed: false }
}

/** Sends the outcome: a replay with the first answer's status and headers, and Idempotent-Replayed: true. */
export function sendOutcome<Body>(reply: FastifyReply, { answer, isReplayed }: IdempotentOutcome<Body>): FastifyReply {
  void reply.headers(answer.headers)
  if (isReplayed) void reply.header('idempotent-replayed', 'true')
  return reply.code(answer.statusCode).send(answer.body)
}
