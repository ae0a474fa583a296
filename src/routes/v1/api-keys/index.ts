import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { API_KEY_ACCESS_LEVELS, EXPIRY_NOT_AHEAD, resolveApiKeyExpiry } from '../../../domain/accounts/api-key-access.js'
import { generateApiKey, hashToken, prefixOfApiKey } from '../../../domain/accounts/tokens.js'
import { findDisplayNameProblem, normalizeDisplayName } from '../../../domain/display-name.js'
import { isUuid } from '../../../domain/uuid.js'
import { ApiError, invalidRequest, type ErrorDetail } from '../../../errors.js'
import { accountOf, siteScopeOf } from '../../../plugins/authentication.js'
import { createApiKeyRepository, type ApiKeyRecord } from '../../../storage/sql/api-key-repository.js'
import { auditedTransaction, recordAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, CurrentPassword, dashboardSecurity, ErrorResponse, IdParams, NullableInput, SecondFactorCode } from '../dashboard-schemas.js'
import { confirmAccountChange } from '../me/account-confirmation.js'
import { named } from '../named-schemas.js'
import { stringEnum } from '../public-schemas.js'

const API_KEY_NAME_MAX_LENGTH = 100

const accessDescription = 'full: everything but making keys and the routes of a logged-in session only (the account\'s password, sessions, two-factor and deletion); read: GET and HEAD only (403 forbidden for anything else)'

/** How many sites a key made for some sites only may name: as many as an account may own. */
export const MAX_API_KEY_SITES = 100

const siteIdsDescription =
  'The sites the key may reach, as it was made; null: every site the account owns or is a member of, now and later. ' +
  'A key for some sites reaches those of them the account still owns or is a member of (a site it leaves, the key no longer reaches): ' +
  'any other site answers 404 not_found, as a site the account has no part in; GET /sites, GET /verifications and the audit log keep to its sites; ' +
  'creating a site is 403 api_key_site_restricted; GET /api-keys lists the key itself only, and it may revoke only itself. Its access applies on top'

const apiKeyProperties = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart' }),
  access: stringEnum(API_KEY_ACCESS_LEVELS, { description: accessDescription }),
  siteIds: Type.Union([Type.Array(Type.String({ format: 'uuid' })), Type.Null()], { description: siteIdsDescription }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the key stops working (401 unauthorized from then on; it stays listed until revoked); null: never',
  }),
  expired: Type.Boolean({ description: "Whether expiresAt has passed by this service's clock, which refuses the key from then on (a browser's clock may be off)" }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'To the minute' }),
}

const ApiKeyCreation = Type.Object(
  {
    name: Type.String({ maxLength: 1000 }),
    access: Type.Optional(stringEnum(API_KEY_ACCESS_LEVELS, { description: `${accessDescription}. Default full` })),
    siteIds: Type.Optional(
      NullableInput(
        Type.Array(Type.String({ maxLength: 100 }), {
          minItems: 1,
          maxItems: MAX_API_KEY_SITES,
          description:
            `The only sites the key may reach: 1 to ${MAX_API_KEY_SITES} ids of sites the account owns or is a member of (400 api_key_site_not_found for any other, ` +
            'checked before the password); null or left out: every site of the account',
        }),
      ),
    ),
    expiresAt: Type.Optional(
      NullableInput(Type.String({ format: 'date-time', description: 'When the key stops working, in the future (ISO 8601 with a time zone); null or left out: never' })),
    ),
    password: CurrentPassword,
    code: Type.Optional(SecondFactorCode),
  },
  { additionalProperties: false },
)

const ApiKey = named('ApiKey', Type.Object(apiKeyProperties))

const CreatedApiKey = Type.Object({
  ...apiKeyProperties,
  key: Type.String({ description: 'The key itself, shown only in this answer: send it as "Authorization: Bearer <key>"' }),
})

function apiKeyView(key: ApiKeyRecord): Type.Static<typeof ApiKey> {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    access: key.access,
    siteIds: key.siteIds,
    expiresAt: key.expiresAt === null ? null : key.expiresAt.toISOString(),
    expired: key.expired,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt === null ? null : key.lastUsedAt.toISOString(),
  }
}

/** Enough for a key per deployment and tool; the list is answered whole, so it stays short. */
export const MAX_API_KEYS_PER_ACCOUNT = 100

const listFull = () => new ApiError('conflict', `An account holds at most ${MAX_API_KEYS_PER_ACCOUNT} API keys, expired ones included until they are revoked; revoke one first.`)

/**
 * The sites a new key is asked to be for, each once and in lower case (undefined: all of them),
 * when the account owns or is a member of every one: 400 api_key_site_not_found naming the first
 * other one. Unknown, malformed and foreign ids answer alike, as findSite's.
 */
async function siteListOf(app: FastifyInstance, accountId: string, requested: readonly string[] | null | undefined): Promise<string[] | null> {
  if (requested === undefined || requested === null) return null
  const visible = new Set((await app.sites.listVisibleTo(accountId)).map(({ site }) => site.id))
  const siteIds = [...new Set(requested.map((id) => id.toLowerCase()))]
  const unknown = siteIds.find((id) => !isUuid(id) || !visible.has(id))
  if (unknown !== undefined) {
    throw new ApiError('api_key_site_not_found', `There is no site with the id ${JSON.stringify(unknown)} in your account or shared with it: siteIds may name only those.`, [
      { field: 'siteIds', message: 'must name sites the account owns or is a member of' },
    ])
  }
  return siteIds
}

/**
 * Whether the request may see (and revoke) the account's key with this id: a key made for some
 * sites only sees itself alone, whose list would name other sites and which could reach them.
 */
function isKeyReachable(request: FastifyRequest, apiKeyId: string): boolean {
  const authentication = request.authentication
  return siteScopeOf(request) === undefined || (authentication?.method === 'api-key' && authentication.apiKeyId === apiKeyId)
}

/**
 * A key cannot mint keys: revoking a leaked key then ends everything it could do, instead of
 * leaving behind the keys it made. Checked before the body, so a key is told so whatever it sent.
 */
async function refuseApiKeys(request: FastifyRequest): Promise<void> {
  if (request.authentication?.method !== 'session') {
    throw new ApiError('forbidden', 'API keys are created from a logged-in session (the dashboard), not with another API key.')
  }
}

const apiKeysRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/api-keys',
    {
      onRequest: refuseApiKeys,
      schema: {
        tags: ['dashboard'],
        summary: 'Create an API key (shown once)',
        sessionOnly: 'create API keys',
        body: ApiKeyCreation,
        description:
          'From a logged-in session only (403 forbidden with an API key: a key cannot mint keys), confirmed by the account\'s password ' +
          '(a wrong one is a 400 validation_error on password, counted against the log-in budget: 429 rate_limited beyond) and, while ' +
          'two-factor authentication is on, a code of the second factor (a missing or wrong one is a 400 validation_error on code, as a ' +
          'password change; 409 conflict, its details naming code, when two-factor was turned on or off meanwhile): a stolen session cookie alone cannot make a ' +
          'lasting credential. A bad name, or an expiresAt not in the future, is a 400 validation_error on its field, named together with a ' +
          'wrong password, and leaves the code unused (as a 409 does). A read key may only make GET and HEAD requests (403 forbidden for ' +
          'anything else); an expired key answers 401 unauthorized, and is listed until revoked. ' +
          `An account holds at most ${MAX_API_KEYS_PER_ACCOUNT} keys, expired ones included until revoked (409 conflict beyond, answered before the password is checked). ` +
          'siteIds makes a key for those sites only (400 api_key_site_not_found for an id of a site the account neither owns nor is a member of, ' +
          'answered before the password is checked); the audit log records them.',
        response: { 201: CreatedApiKey, 400: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
        errorCodes: ['api_key_site_not_found'],
      },
    },
    async (request, reply) => {
      const { password, code, access = 'full' } = request.body
      const name = normalizeDisplayName(request.body.name)
      const issues: ErrorDetail[] = []
      const nameProblem = findDisplayNameProblem(name, API_KEY_NAME_MAX_LENGTH)
      if (nameProblem !== undefined) issues.push({ field: 'name', message: nameProblem })
      const expiry = resolveApiKeyExpiry(request.body.expiresAt, new Date())
      if ('problem' in expiry) issues.push({ field: 'expiresAt', message: expiry.problem })
      // With a problem, the confirmation below throws before the key is made.
      const expiresAt = 'problem' in expiry ? null : expiry.expiresAt
      // Told before the password and code are checked, which a full list would spend for nothing.
      if ((await app.apiKeys.countByAccount(accountOf(request).id)) >= MAX_API_KEYS_PER_ACCOUNT) throw listFull()
      // Told before the password too: the session sees these sites anyway. A site left between
      // here and the key's making, the key just does not reach.
      const siteIds = await siteListOf(app, accountOf(request).id, request.body.siteIds)
      const key = generateApiKey()
      // The body's problems are answered with the password's, before any code is taken.
      const record = await confirmAccountChange(app, request, { field: 'password', password, code, otherIssues: issues }, async (transaction) => {
        const apiKeys = createApiKeyRepository(transaction)
        const created = await apiKeys.create(
          accountOf(request).id,
          { name, prefix: prefixOfApiKey(key), keyHash: hashToken(key), access, siteIds, expiresAt },
          MAX_API_KEYS_PER_ACCOUNT,
        )
        if (created === undefined) {
          // This service's clock found the expiry ahead; the database's, which judges the key's
          // uses, did not. Thrown, the code's taking is rolled back with the rest.
          if (expiresAt !== null && (await apiKeys.isPast(expiresAt))) throw invalidRequest([{ field: 'expiresAt', message: EXPIRY_NOT_AHEAD }])
          // The account's row is locked for the second factor: it is there, so the list has filled
          // since the count above.
          throw listFull()
        }
        await recordAudit(transaction, request, {
          action: 'api_key.created',
          details: { apiKeyId: created.id, name: created.name, prefix: created.prefix, access: created.access, siteIds: created.siteIds, expiresAt: created.expiresAt?.toISOString() ?? null },
        })
        return created
      })
      return reply.code(201).send({ ...apiKeyView(record), key })
    },
  )

  app.get(
    '/api-keys',
    {
      schema: {
        tags: ['dashboard'],
        summary: "The account's API keys (prefixes only)",
        description: 'With an API key made for some sites only (siteIds), that key alone: the others could reach other sites.',
        security: dashboardSecurity,
        response: { 200: Type.Object({ items: Type.Array(ApiKey) }), ...authenticatedErrors },
      },
    },
    async (request) => {
      const keys = await app.apiKeys.listByAccount(accountOf(request).id)
      return { items: keys.filter((key) => isKeyReachable(request, key.id)).map(apiKeyView) }
    },
  )

  app.delete(
    '/api-keys/:id',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Revoke an API key (at once)',
        description: 'An API key made for some sites only (siteIds) may revoke itself only: any other key answers 404 not_found, as one of another account.',
        security: dashboardSecurity,
        params: IdParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { id } = request.params
      const notFound = new ApiError('not_found', 'There is no API key with this id in your account.')
      if (!isUuid(id) || !isKeyReachable(request, id.toLowerCase())) throw notFound
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
