import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { generateApiKey, hashToken, prefixOfApiKey } from '../../../domain/accounts/tokens.js'
import { findDisplayNameProblem, normalizeDisplayName } from '../../../domain/display-name.js'
import { isUuid } from '../../../domain/uuid.js'
import { ApiError, invalidRequest } from '../../../errors.js'
import { accountOf, creationRefused } from '../../../plugins/authentication.js'
import { createApiKeyRepository, type ApiKeyRecord } from '../../../storage/sql/api-key-repository.js'
import { auditedTransaction, recordAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams } from '../dashboard-schemas.js'

const API_KEY_NAME_MAX_LENGTH = 100

const apiKeyProperties = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'To the minute' }),
}

const ApiKey = Type.Object(apiKeyProperties)

const CreatedApiKey = Type.Object({
  ...apiKeyProperties,
  key: Type.String({ description: 'The key itself, shown only in this answer: send it as "Authorization: Bearer <key>"' }),
})

function apiKeyView(key: ApiKeyRecord): Type.Static<typeof ApiKey> {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt === null ? null : key.lastUsedAt.toISOString(),
  }
}

/** Enough for a key per deployment and tool; the list is answered whole, so it stays short. */
export const MAX_API_KEYS_PER_ACCOUNT = 100

const apiKeysRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/api-keys',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Create an API key (shown once)',
        security: dashboardSecurity,
        body: Type.Object({ name: Type.String({ maxLength: 1000 }) }, { additionalProperties: false }),
        description: `From a logged-in session only (403 forbidden with an API key: a key cannot mint keys). An account holds at most ${MAX_API_KEYS_PER_ACCOUNT} keys (409 conflict beyond).`,
        response: { 201: CreatedApiKey, 400: ErrorResponse, 409: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      // A key cannot mint keys: revoking a leaked key then ends everything it could do, instead of
      // leaving behind the keys it made.
      if (request.authentication?.method !== 'session') {
        throw new ApiError('forbidden', 'API keys are created from a logged-in session (the dashboard), not with another API key.')
      }
      const name = normalizeDisplayName(request.body.name)
      const problem = findDisplayNameProblem(name, API_KEY_NAME_MAX_LENGTH)
      if (problem !== undefined) throw invalidRequest([{ field: 'name', message: problem }])
      const key = generateApiKey()
      const record = await auditedTransaction(app, request, async (transaction) => {
        const created = await createApiKeyRepository(transaction).create(accountOf(request).id, { name, prefix: prefixOfApiKey(key), keyHash: hashToken(key) }, MAX_API_KEYS_PER_ACCOUNT)
        if (created !== undefined) await recordAudit(transaction, request, { action: 'api_key.created', details: { apiKeyId: created.id, name: created.name, prefix: created.prefix } })
        return created
      })
      if (record === undefined) throw await creationRefused(app, request, `An account holds at most ${MAX_API_KEYS_PER_ACCOUNT} API keys; revoke one first.`)
      return reply.code(201).send({ ...apiKeyView(record), key })
    },
  )

  app.get(
    '/api-keys',
    {
      schema: {
        tags: ['dashboard'],
        summary: "The account's API keys (prefixes only)",
        security: dashboardSecurity,
        response: { 200: Type.Object({ items: Type.Array(ApiKey) }), ...authenticatedErrors },
      },
    },
    async (request) => ({ items: (await app.apiKeys.listByAccount(accountOf(request).id)).map(apiKeyView) }),
  )

  app.delete(
    '/api-keys/:id',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Revoke an API key (at once)',
        security: dashboardSecurity,
        params: IdParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { id } = request.params
      const notFound = new ApiError('not_found', 'There is no API key with this id in your account.')
      if (!isUuid(id)) throw notFound
      await auditedTransaction(app, request, async (transaction) => {
        const revoked = await createApiKeyRepository(transaction).delete(accountOf(request).id, id)
        if (revoked === undefined) throw notFound
        // A key that revokes itself is named as the actor by the request that authenticated it.
        await recordAudit(transaction, request, { action: 'api_key.revoked', details: { apiKeyId: id.toLowerCase(), ...revoked } })
      })
      return reply.code(204).send(null)
    },
  )
}

export default apiKeysRoutes
