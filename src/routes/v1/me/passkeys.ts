import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { RegistrationResponseJSON } from '@simplewebauthn/server'
import { Type } from 'typebox'
import { MAX_PASSKEYS_PER_ACCOUNT, PASSKEY_NAME_MAX_LENGTH, registrationOptionsFor, verifyPasskeyRegistration, type StoredCredential } from '../../../domain/accounts/passkeys.js'
import { findDisplayNameProblem, normalizeDisplayName } from '../../../domain/display-name.js'
import { isUuid } from '../../../domain/uuid.js'
import { ApiError, invalidRequest, throwIfInvalid, type ErrorDetail } from '../../../errors.js'
import { accountOf, sessionIdOf } from '../../../plugins/authentication.js'
import { createPasskeyRepository, type PasskeyRecord } from '../../../storage/sql/passkey-repository.js'
import { createSessionRepository } from '../../../storage/sql/session-repository.js'
import { auditedTransaction, recordAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, CurrentPassword, ErrorResponse, IdParams, SecondFactorCode } from '../dashboard-schemas.js'
import { named } from '../named-schemas.js'
import { keepRegistrationChallenge, PasskeyOptions, peekRegistrationChallenge, RegistrationAnswer, relyingPartyOfRequest, takeRegistrationChallenge } from '../passkey-challenges.js'
import { confirmAccountChange } from './account-confirmation.js'

const Passkey = named('Passkey', Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'The last sign-in with it; null: never' }),
}))

const PasskeyName = Type.String({ maxLength: 1000, description: `1 to ${PASSKEY_NAME_MAX_LENGTH} characters, to tell the account's passkeys apart ("Work laptop")` })

const Registration = Type.Object(
  { name: PasskeyName, credential: RegistrationAnswer, password: CurrentPassword, code: Type.Optional(SecondFactorCode) },
  { additionalProperties: false },
)

const Renaming = Type.Object({ name: PasskeyName }, { additionalProperties: false })

const Removal = Type.Object({ password: CurrentPassword, code: Type.Optional(SecondFactorCode) }, { additionalProperties: false })

function passkeyView(passkey: PasskeyRecord): Type.Static<typeof Passkey> {
  return {
    id: passkey.id,
    name: passkey.name,
    createdAt: passkey.createdAt.toISOString(),
    lastUsedAt: passkey.lastUsedAt === null ? null : passkey.lastUsedAt.toISOString(),
  }
}

const listFull = () => new ApiError('conflict', `An account holds at most ${MAX_PASSKEYS_PER_ACCOUNT} passkeys; remove one first.`)
const notFound = () => new ApiError('not_found', 'There is no passkey with this id in your account.')
const CHALLENGE_GONE = 'was made for a challenge that is unknown, expired, used already, replaced by newer options or of another session: add the passkey again'

/** The name as stored, and its problem in the body's details. */
function checkedName(entered: string): { name: string; issues: ErrorDetail[] } {
  const name = normalizeDisplayName(entered)
  const problem = findDisplayNameProblem(name, PASSKEY_NAME_MAX_LENGTH)
  return { name, issues: problem === undefined ? [] : [{ field: 'name', message: problem }] }
}

/**
 * The account's passkeys, from a logged-in session only (an API key may neither read nor change
 * them, as two-factor). Adding and removing one are changes of how the account is logged in to:
 * confirmed as the account's other changes are (confirmAccountChange: the password and, while
 * two-factor is on, a code of the second factor), so that a session someone else holds cannot
 * leave itself a way back in, nor take the owner's away.
 */
const passkeyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const passkeys = createPasskeyRepository(app.database)

  app.get(
    '/me/passkeys',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: "The account's passkeys",
        description: 'Oldest first. From a logged-in session only (403 forbidden with an API key).',
        sessionOnly: 'read the passkeys',
        response: {
          200: Type.Object({ items: Type.Array(Passkey), limit: Type.Integer({ description: 'How many passkeys an account may hold (409 conflict beyond)' }) }),
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      sessionIdOf(request)
      return { items: (await passkeys.listByAccount(accountOf(request).id)).map(passkeyView), limit: MAX_PASSKEYS_PER_ACCOUNT }
    },
  )

  app.post(
    '/me/passkeys/options',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Start adding a passkey',
        description:
          'Options for navigator.credentials.create (a discoverable credential with user verification), whose challenge this session may answer once, ' +
          'within 5 minutes, with POST /api/v1/me/passkeys. A session has one challenge at a time: each call replaces the one before, whose answer is refused then. ' +
          `409 conflict when the account holds ${MAX_PASSKEYS_PER_ACCOUNT} passkeys. ` +
          'From a logged-in session only (403 forbidden with an API key).',
        sessionOnly: 'add a passkey',
        response: { 200: PasskeyOptions, 409: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request) => {
      const sessionId = sessionIdOf(request)
      const account = accountOf(request)
      const existing = await passkeys.credentialsOf(account.id)
      if (existing.length >= MAX_PASSKEYS_PER_ACCOUNT) throw listFull()
      const options = await registrationOptionsFor(relyingPartyOfRequest(app, request), account, existing)
      // Under the session's key: a new call replaces the session's last challenge, so that no
      // session holds more than one in the store however often it asks.
      await keepRegistrationChallenge(app, sessionId, account.id, options.challenge)
      return options
    },
  )

  app.post(
    '/me/passkeys',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Add a passkey',
        description:
          "With the browser's answer to the options of POST /api/v1/me/passkeys/options (verified: its challenge, origin, RP ID, user verification and attestation), " +
          'a name, and the account\'s password and, while two-factor authentication is on, a code of the second factor, as a password change asks ' +
          '(a wrong or missing one is a 400 validation_error on its field, counted against its budgets: 429 rate_limited beyond; 409 conflict, its details naming code, ' +
          'when two-factor was turned on or off meanwhile). An answer that does not verify, or whose challenge is unknown, expired or used, is a 400 validation_error ' +
          'on credential. A wrong password leaves the challenge to answer again. ' +
          `At most ${MAX_PASSKEYS_PER_ACCOUNT} passkeys per account (409 conflict). From a logged-in session only (403 forbidden with an API key).`,
        sessionOnly: 'add a passkey',
        body: Registration,
        response: { 201: Passkey, 400: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const sessionId = sessionIdOf(request)
      const { id: accountId } = accountOf(request)
      const { password, code } = request.body
      const { name, issues } = checkedName(request.body.name)
      const answer = { clientExtensionResults: {}, ...request.body.credential } as RegistrationResponseJSON
      // Looked at, not taken: a wrong password below leaves the answer to be sent again.
      const outstanding = await peekRegistrationChallenge(app, sessionId, accountId, answer.response.clientDataJSON)
      let credential: StoredCredential | undefined
      if (outstanding === undefined) {
        issues.push({ field: 'credential', message: CHALLENGE_GONE })
      } else {
        const verdict = await verifyPasskeyRegistration(relyingPartyOfRequest(app, request), answer, outstanding)
        if ('problem' in verdict) issues.push({ field: 'credential', message: `does not verify: ${verdict.problem}` })
        else credential = verdict
      }
      // Told before the password and code are checked, which a full list would spend for nothing.
      if ((await passkeys.countByAccount(accountId)) >= MAX_PASSKEYS_PER_ACCOUNT) throw listFull()
      const created = await confirmAccountChange(app, request, { field: 'password', password, code, otherIssues: issues }, async (transaction) => {
        if (credential === undefined || outstanding === undefined) throw new Error('a passkey registration without a verified answer passed validation')
        // Taken with the change, under the account's lock: of two requests with one answer, one adds it.
        if (!(await takeRegistrationChallenge(app, sessionId, accountId, outstanding))) throw invalidRequest([{ field: 'credential', message: CHALLENGE_GONE }])
        const passkey = await createPasskeyRepository(transaction).create(accountId, credential, name, MAX_PASSKEYS_PER_ACCOUNT)
        // Thrown, so that a code taken for the change is given back with the transaction.
        if (passkey === 'full') throw listFull()
        if (passkey === 'taken') throw invalidRequest([{ field: 'credential', message: 'is a passkey registered already' }])
        await recordAudit(transaction, request, { action: 'account.passkey_added', details: { passkeyId: passkey.id, name: passkey.name } })
        return passkey
      })
      return reply.code(201).send(passkeyView(created))
    },
  )

  app.put(
    '/me/passkeys/:id',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Rename a passkey',
        description: 'A bad name is a 400 validation_error on name. From a logged-in session only (403 forbidden with an API key).',
        sessionOnly: 'rename a passkey',
        params: IdParams,
        body: Renaming,
        response: { 200: Passkey, 400: ErrorResponse, 404: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request) => {
      sessionIdOf(request)
      const { name, issues } = checkedName(request.body.name)
      throwIfInvalid(issues)
      const id = request.params.id.toLowerCase()
      if (!isUuid(id)) throw notFound()
      const renamed = await auditedTransaction(app, request, async (transaction) => {
        const outcome = await createPasskeyRepository(transaction).rename(accountOf(request).id, id, name)
        if (outcome === undefined) throw notFound()
        if (outcome.from !== name) await recordAudit(transaction, request, { action: 'account.passkey_renamed', details: { passkeyId: id, from: outcome.from, to: name } })
        return outcome.passkey
      })
      return passkeyView(renamed)
    },
  )

  app.delete(
    '/me/passkeys/:id',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Remove a passkey',
        description:
          'With the password and, while two-factor authentication is on, a code of the second factor, as adding one. It signs in no more, at once, and the sessions ' +
          'it opened end with it (the current one too, when it was opened with this passkey). ' +
          '404 not_found for an id that is not a passkey of the account. From a logged-in session only (403 forbidden with an API key).',
        sessionOnly: 'remove a passkey',
        params: IdParams,
        body: Removal,
        response: { 204: Type.Null(), 400: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      sessionIdOf(request)
      const { password, code } = request.body
      const { id: accountId } = accountOf(request)
      const id = request.params.id.toLowerCase()
      // Told before the password and code are checked, which a passkey already gone would spend for nothing.
      if (!isUuid(id) || (await passkeys.findById(accountId, id)) === undefined) throw notFound()
      await confirmAccountChange(app, request, { field: 'password', password, code }, async (transaction) => {
        // The sessions it opened first (their passkey_id's foreign key would end them with it
        // anyway, also one a sign-in opens meanwhile), to count them in the event.
        const endedSessions = await createSessionRepository(transaction).deleteOpenedWithPasskey(accountId, id)
        const removed = await createPasskeyRepository(transaction).delete(accountId, id)
        if (removed === undefined) throw notFound()
        await recordAudit(transaction, request, { action: 'account.passkey_removed', details: { passkeyId: id, name: removed.name, endedSessions } })
      })
      return reply.code(204).send(null)
    },
  )
}

export default passkeyRoutes
