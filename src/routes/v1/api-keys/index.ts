import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { MAX_API_KEY_ADDRESSES, normalizeApiKeyAddresses } from '../../../domain/accounts/api-key-addresses.js'
import { API_KEY_ACCESS_LEVELS, EXPIRY_NOT_AHEAD, resolveApiKeyExpiry, widensApiKey, type ApiKeyTerms } from '../../../domain/accounts/api-key-access.js'
import { generateApiKey, hashToken, prefixOfApiKey } from '../../../domain/accounts/tokens.js'
import { findDisplayNameProblem, normalizeDisplayName } from '../../../domain/display-name.js'
import { isUuid } from '../../../domain/uuid.js'
import { ApiError, invalidRequest, throwIfInvalid, type ErrorDetail } from '../../../errors.js'
import { accountOf, siteScopeOf } from '../../../plugins/authentication.js'
import type { SqlExecutor } from '../../../storage/ports.js'
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

const allowedAddressesDescription =
  'The IP addresses and ranges (203.0.113.7, 203.0.113.0/24, 2001:db8::/48) the key may be used from, in their canonical form; null: any address. ' +
  "A request with the key from any other address (the client's, as TRUST_PROXY makes it behind a proxy) answers 403 api_key_address_refused, and is not recorded as a use"

const apiKeyProperties = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart' }),
  access: stringEnum(API_KEY_ACCESS_LEVELS, { description: accessDescription }),
  siteIds: Type.Union([Type.Array(Type.String({ format: 'uuid' })), Type.Null()], { description: siteIdsDescription }),
  allowedAddresses: Type.Union([Type.Array(Type.String()), Type.Null()], { description: allowedAddressesDescription }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the key stops working (401 unauthorized from then on; it stays listed until revoked); null: never',
  }),
  expired: Type.Boolean({ description: "Whether expiresAt has passed by this service's clock, which refuses the key from then on (a browser's clock may be off)" }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'To the minute' }),
}

/** A key's siteIds as a creation or an edit takes them: a list of 1 to MAX_API_KEY_SITES ids, or null for all sites. */
function siteListInput(description: string) {
  return Type.Optional(NullableInput(Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: MAX_API_KEY_SITES, description })))
}

/**
 * A key's allowedAddresses as a creation or an edit takes them: a list of addresses and ranges, or
 * null for any address. More entries than a key holds are let through the schema, so that repeats
 * are dropped before the distinct ones are counted (normalizeApiKeyAddresses).
 */
function addressListInput(description: string) {
  return Type.Optional(NullableInput(Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 10 * MAX_API_KEY_ADDRESSES, description })))
}

const ApiKeyCreation = Type.Object(
  {
    name: Type.String({ maxLength: 1000 }),
    access: Type.Optional(stringEnum(API_KEY_ACCESS_LEVELS, { description: `${accessDescription}. Default full` })),
    siteIds: siteListInput(
      `The only sites the key may reach: 1 to ${MAX_API_KEY_SITES} ids of sites the account owns or is a member of (400 api_key_site_not_found for any other, ` +
        'checked before the password); null or left out: every site of the account',
    ),
    allowedAddresses: addressListInput(
      `The only addresses the key may be used from: 1 to ${MAX_API_KEY_ADDRESSES} IP addresses or ranges no wider than /8 (IPv4) or /16 (IPv6), ` +
        'normalized and deduplicated (a 400 validation_error on allowedAddresses.<index> for one that is not); null or left out: any address',
    ),
    expiresAt: Type.Optional(
      NullableInput(Type.String({ format: 'date-time', description: 'When the key stops working, in the future (ISO 8601 with a time zone); null or left out: never' })),
    ),
    password: CurrentPassword,
    code: Type.Optional(SecondFactorCode),
  },
  { additionalProperties: false },
)

const ApiKeyEdit = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 1000, description: 'The new name (left out: unchanged)' })),
    access: Type.Optional(stringEnum(API_KEY_ACCESS_LEVELS, { description: `${accessDescription}. Left out: unchanged` })),
    siteIds: siteListInput(
      'The only sites the key may reach from now on, as at its making (400 api_key_site_not_found for a site the account neither owns nor is a member of); ' +
        'null: every site of the account; left out: unchanged',
    ),
    allowedAddresses: addressListInput('The only addresses the key may be used from from now on, as at its making; null: any address; left out: unchanged'),
    expiresAt: Type.Optional(NullableInput(Type.String({ format: 'date-time', description: 'When the key stops working, in the future; null: never; left out: unchanged' }))),
    password: Type.Optional(Type.String({ maxLength: 1000, description: "The account's password: read only for an edit that widens the key (then required)" })),
    code: Type.Optional(SecondFactorCode),
  },
  { additionalProperties: false, examples: [{ name: 'deploy shop', siteIds: ['7d3f0f4e-1c2b-4a5d-9e8f-0a1b2c3d4e5f'] }] },
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
    allowedAddresses: key.allowedAddresses,
    expiresAt: key.expiresAt === null ? null : key.expiresAt.toISOString(),
    expired: key.expired,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt === null ? null : key.lastUsedAt.toISOString(),
  }
}

/** Enough for a key per deployment and tool; the list is answered whole, so it stays short. */
export const MAX_API_KEYS_PER_ACCOUNT = 100

const listFull = () => new ApiError('conflict', `An account holds at most ${MAX_API_KEYS_PER_ACCOUNT} API keys, expired ones included until they are revoked; revoke one first.`)

/** The ids a body names, as they are stored and compared: lowercased, each once. */
function normalizedSiteIds(requested: readonly string[]): string[] {
  return [...new Set(requested.map((id) => id.toLowerCase()))]
}

/**
 * The sites a new key is asked to be for, each once and in lower case (undefined: all of them),
 * when the account owns or is a member of every one: 400 api_key_site_not_found naming the first
 * other one. Unknown, malformed and foreign ids answer alike, as findSite's.
 */
async function siteListOf(app: FastifyInstance, accountId: string, requested: readonly string[] | null | undefined): Promise<string[] | null> {
  if (requested === undefined || requested === null) return null
  const visible = new Set((await app.sites.listVisibleTo(accountId)).map(({ site }) => site.id))
  const siteIds = normalizedSiteIds(requested)
  const unknown = siteIds.find((id) => !isUuid(id) || !visible.has(id))
  if (unknown !== undefined) {
    throw new ApiError('api_key_site_not_found', `There is no site with the id ${JSON.stringify(unknown)} in your account or shared with it: siteIds may name only those.`, [
      { field: 'siteIds', message: 'must name sites the account owns or is a member of' },
    ])
  }
  return siteIds
}

/** A body's allowedAddresses normalized (null: any address), or the issues of its entries. */
function addressListOf(requested: readonly string[] | null | undefined): { addresses: string[] | null; issues: ErrorDetail[] } {
  if (requested === undefined || requested === null) return { addresses: null, issues: [] }
  return normalizeApiKeyAddresses(requested)
}

const noSuchKey = () => new ApiError('not_found', 'There is no API key with this id in your account.')

const expiredKey = () => new ApiError('api_key_expired')

/** What an edit's body asks of a key, checked: its name's and expiry's problems are answered together, a foreign site at once. */
interface KeyEdit {
  name?: string
  terms: Partial<ApiKeyTerms>
  issues: ErrorDetail[]
}

/**
 * What the body asks of the key, its siteIds normalised but not yet looked up: whether the edit
 * widens the key is judged on them, so that an API key asking for a site it does not reach is
 * refused alike whether the account reaches that site or not (the refusal tells it nothing).
 */
function editOf(body: Type.Static<typeof ApiKeyEdit>): KeyEdit {
  const edit: KeyEdit = { terms: {}, issues: [] }
  if (body.name !== undefined) {
    edit.name = normalizeDisplayName(body.name)
    const problem = findDisplayNameProblem(edit.name, API_KEY_NAME_MAX_LENGTH)
    if (problem !== undefined) edit.issues.push({ field: 'name', message: problem })
  }
  if (body.access !== undefined) edit.terms.access = body.access
  if (body.siteIds !== undefined) edit.terms.siteIds = body.siteIds === null ? null : normalizedSiteIds(body.siteIds)
  if (body.allowedAddresses !== undefined) {
    const list = addressListOf(body.allowedAddresses)
    // A list with a bad entry changes nothing: its issues are answered, and a list read partly
    // cannot make the edit look like a narrowing.
    if (list.issues.length > 0) edit.issues.push(...list.issues)
    else edit.terms.allowedAddresses = list.addresses
  }
  if (body.expiresAt !== undefined) {
    const expiry = resolveApiKeyExpiry(body.expiresAt, new Date())
    if ('problem' in expiry) edit.issues.push({ field: 'expiresAt', message: expiry.problem })
    else edit.terms.expiresAt = expiry.expiresAt
  }
  return edit
}

/** The fields an edit changes, each from and to (a time as ISO 8601), for the audit log; empty: nothing changes. */
function changesOf(before: ApiKeyRecord, after: ApiKeyRecord): { field: string; from: unknown; to: unknown }[] {
  const text = (time: Date | null) => time?.toISOString() ?? null
  const fields = [
    { field: 'name', from: before.name, to: after.name },
    { field: 'access', from: before.access, to: after.access },
    { field: 'siteIds', from: before.siteIds, to: after.siteIds },
    { field: 'allowedAddresses', from: before.allowedAddresses, to: after.allowedAddresses },
    { field: 'expiresAt', from: text(before.expiresAt), to: text(after.expiresAt) },
  ]
  return fields.filter(({ from, to }) => JSON.stringify(from) !== JSON.stringify(to))
}

/** The key's terms once the edit is made: those it names, the key's own for the rest. */
function termsAfter(key: ApiKeyTerms, edit: KeyEdit): ApiKeyTerms {
  return { access: key.access, siteIds: key.siteIds, allowedAddresses: key.allowedAddresses, expiresAt: key.expiresAt, ...edit.terms }
}

/**
 * Applies the edit to the key, locked, and records it (api_key.updated): the key as it is now. An
 * edit that changes nothing writes nothing. `mayWiden` says whether the edit was confirmed as a
 * widening: one judged against the key as read before, which has narrowed meanwhile, is a 409.
 */
async function applyEdit(transaction: SqlExecutor, request: FastifyRequest, id: string, edit: KeyEdit, mayWiden: boolean): Promise<ApiKeyRecord> {
  const apiKeys = createApiKeyRepository(transaction)
  const accountId = accountOf(request).id
  const current = await apiKeys.findForUpdate(accountId, id)
  if (current === undefined) throw noSuchKey()
  if (current.expired) throw expiredKey()
  const terms = termsAfter(current, edit)
  if (!mayWiden && widensApiKey(current, terms)) throw new ApiError('conflict', 'The key was changed meanwhile, and this edit would now widen it: read it again.')
  const wanted = {
    ...current,
    name: edit.name ?? current.name,
    ...terms,
    siteIds: terms.siteIds === null ? null : [...terms.siteIds],
    allowedAddresses: terms.allowedAddresses === null ? null : [...terms.allowedAddresses],
  }
  const changes = changesOf(current, wanted)
  if (changes.length === 0) return current
  const updated = await apiKeys.update(accountId, id, wanted)
  if (updated === undefined) {
    // This service's clock found the expiry ahead; the database's, which judges the key's uses, did not.
    throw invalidRequest([{ field: 'expiresAt', message: EXPIRY_NOT_AHEAD }])
  }
  await recordAudit(transaction, request, { action: 'api_key.updated', details: { apiKeyId: id, name: updated.name, prefix: updated.prefix, changes } })
  return updated
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
          'answered before the password is checked); the audit log records them. allowedAddresses makes a key usable from those addresses only ' +
          '(403 api_key_address_refused from any other, as the client address TRUST_PROXY makes of the request).',
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
      const addressList = addressListOf(request.body.allowedAddresses)
      issues.push(...addressList.issues)
      const allowedAddresses = addressList.addresses
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
          { name, prefix: prefixOfApiKey(key), keyHash: hashToken(key), access, siteIds, allowedAddresses, expiresAt },
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
          details: {
            apiKeyId: created.id,
            name: created.name,
            prefix: created.prefix,
            access: created.access,
            siteIds: created.siteIds,
            allowedAddresses: created.allowedAddresses,
            expiresAt: created.expiresAt?.toISOString() ?? null,
          },
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
      if (!isUuid(id) || !isKeyReachable(request, id.toLowerCase())) throw noSuchKey()
      await auditedTransaction(app, request, async (transaction) => {
        const revoked = await createApiKeyRepository(transaction).delete(accountOf(request).id, id)
        if (revoked === undefined) throw noSuchKey()
        // A key that revokes itself is named as the actor by the request that authenticated it.
        await recordAudit(transaction, request, { action: 'api_key.revoked', details: { apiKeyId: id.toLowerCase(), ...revoked } })
      })
      return reply.code(204).send(null)
    },
  )

  app.patch(
    '/api-keys/:id',
    {
      schema: {
        tags: ['dashboard'],
        summary: "Change an API key's name, access, sites, addresses or expiry (its secret stays)",
        description:
          'Sets the fields the body names and keeps the others; the key itself does not change, so the scripts that use it need no new secret. ' +
          'The next request with the key gets its new terms, on every instance (keys are read on each request). ' +
          'An edit that widens the key (full access where it read only, a site it did not reach or every site, an address no entry of its allowedAddresses holds or any address, a later expiry or none) is made from a logged-in session only ' +
          '(403 api_key_widening_forbidden with an API key, even the key itself: a leaked key cannot give itself, or another key, more than it was given; a site outside the key\'s list answers so whether the account reaches it or not) and ' +
          'confirmed as a key\'s making: by the password (a missing or wrong one is a 400 validation_error on password, counted against the log-in budget) and, while two-factor ' +
          'authentication is on, a code. A rename, or an edit that only narrows the key (a list of addresses within the one it has), needs neither, and a full API key may make it ' +
          '(a key made for some sites only, to itself only: any other key is a 404 not_found, as for revoking). siteIds may name only sites the account owns or is a member of ' +
          '(400 api_key_site_not_found otherwise, answered before the password is checked). An expired key cannot be changed (409 api_key_expired): revoke it and make another. ' +
          'An edit that changes nothing writes nothing; one that does is recorded in the audit log (api_key.updated, with each change from and to).',
        security: dashboardSecurity,
        sessionOnlyPart: 'widen an API key',
        params: IdParams,
        body: ApiKeyEdit,
        response: { 200: ApiKey, 400: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
        errorCodes: ['api_key_site_not_found', 'api_key_widening_forbidden', 'api_key_expired'],
      },
    },
    async (request) => {
      const id = request.params.id.toLowerCase()
      if (!isUuid(id) || !isKeyReachable(request, id)) throw noSuchKey()
      const edit = editOf(request.body)
      const current = (await app.apiKeys.listByAccount(accountOf(request).id)).find((key) => key.id === id)
      if (current === undefined) throw noSuchKey()
      if (current.expired) throw expiredKey()
      const widens = widensApiKey(current, termsAfter(current, edit))
      // A key that could widen keys would leave wider keys behind when it is revoked, as one that could mint them.
      if (widens && request.authentication?.method !== 'session') throw new ApiError('api_key_widening_forbidden')
      // Looked up after that refusal: the same list, normalised, or a 400 for a site the account does not reach.
      if (edit.terms.siteIds !== undefined) edit.terms.siteIds = await siteListOf(app, accountOf(request).id, edit.terms.siteIds)
      if (!widens) {
        throwIfInvalid(edit.issues)
        return apiKeyView(await auditedTransaction(app, request, (transaction) => applyEdit(transaction, request, id, edit, false)))
      }
      // The password's check reads the session (sessionOnlyPart).
      const { password, code } = request.body
      if (password === undefined) throw invalidRequest([...edit.issues, { field: 'password', message: 'is required to widen a key: your current password' }])
      const record = await confirmAccountChange(app, request, { field: 'password', password, code, otherIssues: edit.issues }, (transaction) =>
        applyEdit(transaction, request, id, edit, true),
      )
      return apiKeyView(record)
    },
  )
}

export default apiKeysRoutes
