import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { normalizeEmailAddress } from '../../../domain/accounts/email-address.js'
import { isPasswordCorrect, PASSWORD_MAX_LENGTH } from '../../../domain/accounts/password.js'
import { generateSessionToken, hashToken } from '../../../domain/accounts/tokens.js'
import { isUuid } from '../../../domain/uuid.js'
import { ApiError } from '../../../errors.js'
import {
  accountOf,
  sessionIdOf,
  clearSessionCookie,
  rejectCrossOriginForm,
  sessionCookieName,
  SESSION_LIFETIME_MS,
  setSessionCookie,
} from '../../../plugins/authentication.js'
import { EmailProperty } from '../accounts/index.js'
import { recordSecondFactorFailure, takeSecondFactor } from '../me/account-confirmation.js'
import { createAccountRepository } from '../../../storage/sql/account-repository.js'
import { createTwoFactorRepository } from '../../../storage/sql/two-factor-repository.js'
import { createSessionRepository, MAX_LISTED_SESSIONS, type SessionRecord } from '../../../storage/sql/session-repository.js'
import { auditActorOf, auditedTransaction, recordAudit, recordRepeatedAudit } from '../audit-log/audit-trail.js'
import { enforcePasswordAttemptBudgets, enforceSecondFactorBudgets, giveBack, givenBackOnceRight, type CountedAttempt } from '../accounts/rate-limits.js'
import currentSessionRoutes from './current-session.js'
import passkeySignInRoutes from './passkey-sign-in.js'
import { deviceCookieName, isKnownDevice, passwordDevice, rememberDevice, secondFactorDevice } from './known-device.js'
import { Account, authenticatedErrors, ErrorResponse, IdParams, SecondFactorCode } from '../dashboard-schemas.js'

const LogIn = Type.Object(
  {
    email: EmailProperty,
    password: Type.String({
      maxLength: PASSWORD_MAX_LENGTH,
      description: `The account's password. The rules for a new one do not apply here (an account whose password breaks a rule added since still logs in); no password is longer than ${PASSWORD_MAX_LENGTH} characters (400 validation_error beyond)`,
    }),
    code: Type.Optional(SecondFactorCode),
  },
  { additionalProperties: false },
)

const SessionView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  current: Type.Boolean({ description: 'Whether this is the session of the request' }),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
  lastSeenAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'To the minute' }),
  userAgent: Type.Union([Type.String(), Type.Null()], { description: 'The User-Agent the log-in sent (up to 512 characters)' }),
  clientIp: Type.Union([Type.String(), Type.Null()], { description: 'The address the log-in came from' }),
})

function sessionView(session: SessionRecord, currentSessionId: string): Type.Static<typeof SessionView> {
  return {
    id: session.id,
    current: session.id === currentSessionId,
    createdAt: session.createdAt.toISOString(),
    expiresAt: session.expiresAt.toISOString(),
    lastSeenAt: session.lastSeenAt === null ? null : session.lastSeenAt.toISOString(),
    userAgent: session.userAgent,
    clientIp: session.clientIp,
  }
}

const sessionsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  /**
   * The right password without a code, on an account with two-factor on: a log-in's first step,
   * the owner's or someone else's who has the password. Told to the owner (one event an hour, with
   * the addresses), unless the browser has passed the second factor before: the owner's own.
   */
  async function recordPasswordWithoutCode(request: FastifyRequest, accountId: string, emailKey: string, enabledAt: Date): Promise<void> {
    if (isKnownDevice(request, app.keyRing.macKeyFor('device'), secondFactorDevice(emailKey, enabledAt), app.config)) return
    await recordRepeatedAudit(app.database, request, { action: 'account.two_factor_asked', accountId })
  }

  app.post(
    '/sessions',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Log in',
        description:
          `Answers the account and sets the HttpOnly session cookie ${sessionCookieName(app.config)} (valid ${SESSION_LIFETIME_MS / 86_400_000} days, until unused for SESSION_IDLE_TIMEOUT (3 days unless configured), or until logout). ` +
          'An account with two-factor authentication on needs code as well, once the password is right: without it 401 two_factor_required, ' +
          'with a wrong one 401 two_factor_invalid (at most 5 wrong codes per quarter hour from one client and 10 an hour from everywhere, the latter not for a browser ' +
          'that passed the second factor before: 429 rate_limited beyond, naming the limit; a right code is not counted). ' +
          'Wrong passwords are limited per 10 minutes to 10 per account from one client, 30 from one client and 100 per account from everywhere (429 rate_limited); ' +
          'a browser that has logged in to the account since its password last changed (its tollgate_device cookie) is spared the last, from at most 3 addresses per cookie in 10 minutes; ' +
          'a right password is not counted, unless sent with a wrong code. ' +
          "An authenticator code works once; a recovery code is used up. " +
          'The right password of an account the operator has disabled (npm run account -- disable) answers 403 account_disabled; a wrong one answers as for any account.',
        body: LogIn,
        response: { 200: Account, 401: ErrorResponse, 403: ErrorResponse, 429: ErrorResponse },
        errorCodes: ['invalid_credentials', 'account_disabled', 'two_factor_required', 'two_factor_invalid'],
        responseHeaders: {
          200: {
            'Set-Cookie': {
              type: 'string',
              description:
                `${sessionCookieName(app.config)} (the session: HttpOnly, SameSite=Lax, ${SESSION_LIFETIME_MS / 86_400_000} days; Secure in production), ` +
                `and ${deviceCookieName(app.config)} (this browser has logged in to the account: HttpOnly, SameSite=Strict, 90 days; it keeps the ` +
                "account's log-in budget for this browser when others exhaust it); after a right second-factor code also " +
                `${deviceCookieName(app.config, 'tollgate_device_2fa')} (the same for the second factor's budget, until two-factor is turned off)`,
            },
          },
        },
      },
    },
    async (request, reply) => {
      rejectCrossOriginForm(request, app.config)
      const email = normalizeEmailAddress(request.body.email)
      const { emailKey, account, attempt } = await enforcePasswordAttemptBudgets(app, request, email)
      // Runs Argon2 even for an unknown address, so timing does not reveal which addresses exist.
      const isCorrect = await isPasswordCorrect(account?.passwordHash, request.body.password)
      if (account === undefined) throw new ApiError('invalid_credentials')
      if (!isCorrect) {
        // The owner sees the guesses at their account, counted in one event an hour; an address
        // that has no account has no one to tell. Not awaited: the answer must take as long for
        // an address with an account as for one without.
        recordRepeatedAudit(app.database, request, { action: 'account.login_failed', accountId: account.id }).catch((error: unknown) =>
          request.log.warn({ err: error }, 'could not record a failed log-in in the audit log'),
        )
        throw new ApiError('invalid_credentials')
      }
      // Said only once the password is right: a wrong one answers as for any account, so this
      // tells nothing to whoever guesses (who learns that the address has an account only from a
      // right password, as before). Before the second factor, so that no code is spent.
      if (account.disabledAt !== null) {
        await giveBack(request, attempt)
        throw new ApiError('account_disabled')
      }
      // The right password is no guess once nothing is left to guess: given back to every budget
      // it was counted against, so that the owner's log-ins (two requests each with two-factor on)
      // do not spend the budget of the owner's later log-ins and password checks. Wrong passwords
      // stay counted, the client's across accounts as well (credential stuffing is slowed by its
      // misses); so does a right one sent with a wrong code, given back below only with a right
      // code: the code's budgets are per account, and the client's across accounts must still
      // slow one machine guessing the codes of many accounts whose passwords it holds.
      // As the account's row was read with the password: the transaction below looks again, locked.
      const twoFactorSince = account.twoFactorEnabledAt
      const code = request.body.code?.trim() ?? ''
      let codeAttempt: CountedAttempt | undefined
      if (twoFactorSince === null) {
        await giveBack(request, attempt)
      } else {
        if (code === '') {
          await giveBack(request, attempt)
          await recordPasswordWithoutCode(request, account.id, emailKey, twoFactorSince)
          throw new ApiError('two_factor_required')
        }
        codeAttempt = await enforceSecondFactorBudgets(app, request, emailKey, twoFactorSince)
      }
      const token = generateSessionToken()
      const expiresAt = new Date(Date.now() + SESSION_LIFETIME_MS)
      const origin = { userAgent: request.headers['user-agent'] ?? null, clientIp: request.ip }
      // A right code is no guess either (as a change confirmed with one): only wrong codes
      // spend the second factor's budgets, and the password's sent with them, the session
      // opened or not.
      const outcome = await givenBackOnceRight(request, [codeAttempt, attempt], (proveRight) => app.database.transaction(async (transaction) => {
        // As it is now, the account's row locked: two-factor turned on since it was read above
        // asks for a code again, counted against its budgets this time.
        // (Deleted meanwhile, it has no row: the session below is not made.)
        const current = (await createTwoFactorRepository(transaction).lockTwoFactor(account.id)) ?? undefined
        if (current !== undefined && twoFactorSince === null) throw new ApiError('two_factor_required')
        // The code is taken with the session, so that a log-in that opens none leaves it unused.
        const factor = current === undefined ? undefined : await takeSecondFactor(app, transaction, account.id, current, code)
        if (factor !== undefined) proveRight()
        if (current !== undefined && factor === undefined) return 'two_factor_invalid'
        // A password change that commits meanwhile makes the password just checked a wrong one.
        const id = await createSessionRepository(transaction).create(account, hashToken(token), expiresAt, origin)
        // Thrown, so that the code taken above is given back with the transaction.
        if (id === undefined) throw new ApiError('invalid_credentials')
        const actor = { ...auditActorOf(request), type: 'session' as const, id, name: account.email }
        if (factor?.kind === 'recovery-code') {
          await recordAudit(transaction, request, { action: 'account.recovery_code_used', accountId: account.id, actor, details: { recoveryCodesLeft: factor.recoveryCodesLeft } })
        }
        await recordAudit(transaction, request, { action: 'account.logged_in', accountId: account.id, actor })
        return { secondFactorSince: current?.enabledAt }
      }))
      if (outcome === 'two_factor_invalid') {
        await recordSecondFactorFailure(app, request, account.id)
        throw new ApiError('two_factor_invalid')
      }
      setSessionCookie(reply, token, expiresAt, app.config)
      rememberDevice(reply, app.keyRing.macKeyFor('device'), passwordDevice(emailKey, account), app.config)
      if (outcome.secondFactorSince !== undefined) {
        rememberDevice(reply, app.keyRing.macKeyFor('device'), secondFactorDevice(emailKey, outcome.secondFactorSince), app.config)
      }
      return { id: account.id, email: account.email, createdAt: account.createdAt.toISOString() }
    },
  )

  app.delete(
    '/sessions',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Log out',
        description: 'Ends the session of the cookie at once, on every instance. With an API key: 403 forbidden (revoke keys with DELETE /api/v1/api-keys/{id}).',
        sessionOnly: 'log out',
        response: { 204: Type.Null(), ...authenticatedErrors },
        responseHeaders: { 204: { 'Set-Cookie': { type: 'string', description: `${sessionCookieName(app.config)} cleared (Max-Age=0)` } } },
      },
    },
    async (request, reply) => {
      // 403 forbidden with an API key, as every other operation of a session only (revoke a key with DELETE /api/v1/api-keys/{id}).
      const sessionId = sessionIdOf(request)
      await auditedTransaction(app, request, async (transaction) => {
        await createSessionRepository(transaction).delete(sessionId)
        await recordAudit(transaction, request, { action: 'account.logged_out' })
      })
      clearSessionCookie(reply, app.config)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/sessions',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: "The account's sessions",
        description:
          `The live log-in sessions, the most recently used first (at most ${MAX_LISTED_SESSIONS}), with the browser and address each logged in from, ` +
          'so that one that is not yours can be ended (DELETE /api/v1/sessions/{id}). From a logged-in session only (403 with an API key).',
        sessionOnly: 'list the sessions',
        response: { 200: Type.Object({ items: Type.Array(SessionView) }), ...authenticatedErrors },
      },
    },
    async (request) => {
      const current = sessionIdOf(request)
      const sessions = await app.sessions.listByAccount(accountOf(request).id)
      return { items: sessions.map((session) => sessionView(session, current)) }
    },
  )

  app.delete(
    '/sessions/:id',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'End one session',
        description: 'Logs that session out at once, on every instance; ending the current one logs this browser out. From a logged-in session only (403 with an API key).',
        sessionOnly: 'end a session',
        params: IdParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const current = sessionIdOf(request)
      const { id } = request.params
      const notFound = new ApiError('not_found', 'There is no session with this id in your account.')
      if (!isUuid(id)) throw notFound
      await auditedTransaction(app, request, async (transaction) => {
        if (!(await createSessionRepository(transaction).deleteOfAccount(accountOf(request).id, id.toLowerCase()))) throw notFound
        await recordAudit(transaction, request, { action: 'session.ended', details: { sessionId: id.toLowerCase() } })
      })
      if (id.toLowerCase() === current) clearSessionCookie(reply, app.config)
      return reply.code(204).send(null)
    },
  )

  app.delete(
    '/sessions/others',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Log out everywhere else',
        description: 'Ends every other session of the account at once (a browser left logged in elsewhere, a session that is not yours); this one and the API keys stay. ' +
          'Every known-browser cookie of the account (tollgate_device, which spares its browser the log-in limit from everywhere) stops counting, this browser\'s until its next log-in.',
        sessionOnly: 'end the other sessions',
        response: { 200: Type.Object({ endedSessions: Type.Integer({ minimum: 0 }) }), ...authenticatedErrors },
      },
    },
    async (request) => {
      const current = sessionIdOf(request)
      const endedSessions = await auditedTransaction(app, request, async (transaction) => {
        const ended = await createSessionRepository(transaction).deleteOthers(accountOf(request).id, current)
        // Whoever holds a copy of a known-browser cookie is spared the log-in limit no more; this
        // browser is known again from its next log-in.
        await createAccountRepository(transaction).forgetKnownBrowsers(accountOf(request).id)
        if (ended > 0) await recordAudit(transaction, request, { action: 'sessions.ended_others', details: { endedSessions: ended } })
        return ended
      })
      return { endedSessions }
    },
  )

  await app.register(currentSessionRoutes)
  await app.register(passkeySignInRoutes)
}

export default sessionsRoutes
