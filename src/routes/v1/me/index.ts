import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { findPasswordProblem, hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_RULES } from '../../../domain/accounts/password.js'
import { ApiError } from '../../../errors.js'
import { accountOf, clearSessionCookie, sessionCookieName } from '../../../plugins/authentication.js'
import { createAccountRepository } from '../../../storage/sql/account-repository.js'
import { createSessionRepository } from '../../../storage/sql/session-repository.js'
import { createVerificationQueryRepository } from '../../../storage/sql/verification-query-repository.js'
import { recordAudit } from '../audit-log/audit-trail.js'
import { announceSetupCode } from '../accounts/announce-setup-code.js'
import { confirmAccountChange, confirmWithPassword, withSecondFactor } from './account-confirmation.js'
import passkeyRoutes from './passkeys.js'
import { passwordDevice, rememberDevice } from '../sessions/known-device.js'
import twoFactorRoutes from './two-factor.js'
import { Account, authenticatedErrors, CurrentPassword, dashboardSecurity, ErrorResponse, SecondFactorCode } from '../dashboard-schemas.js'

const PasswordChange = Type.Object(
  {
    currentPassword: CurrentPassword,
    newPassword: Type.String({ maxLength: PASSWORD_MAX_LENGTH, description: `${PASSWORD_RULES} (400 validation_error on newPassword otherwise)` }),
    code: Type.Optional(SecondFactorCode),
  },
  { additionalProperties: false },
)

const AccountDeletion = Type.Object(
  { password: CurrentPassword, code: Type.Optional(SecondFactorCode) },
  { additionalProperties: false },
)

const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/me',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'The account of the session or API key',
        security: dashboardSecurity,
        response: { 200: Account, ...authenticatedErrors },
      },
    },
    async (request) => {
      const account = await app.accounts.findById(accountOf(request).id)
      if (account === undefined) throw new ApiError('unauthorized')
      return { id: account.id, email: account.email, createdAt: account.createdAt.toISOString() }
    },
  )

  app.put(
    '/me/password',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Change the password',
        description:
          'From a logged-in session only (403 forbidden with an API key: a leaked key cannot take the account over). ' +
          'A wrong current password is a 400 validation_error on currentPassword, counted against the same budget as log-ins ' +
          '(429 rate_limited beyond). While two-factor authentication is on, `code` is required too: a missing or wrong one is a 400 ' +
          'validation_error on code, a wrong one counted against the second factor\'s budgets (429 beyond); 409 conflict, its details naming code, when two-factor was turned ' +
          'on or off meanwhile. A new password equal to the current one is a 400 password_unchanged, its details naming newPassword, and changes nothing. ' +
          'Every other session of the account ends; this one and the API keys stay. Every known-browser cookie of the account (tollgate_device) stops counting; ' +
          'this browser gets a new one.',
        sessionOnly: 'change the password',
        body: PasswordChange,
        response: { 204: Type.Null(), 400: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
        errorCodes: ['password_unchanged'],
      },
    },
    async (request, reply) => {
      const problem = findPasswordProblem(request.body.newPassword, accountOf(request).email)
      const { currentPassword, code } = request.body
      const confirmed = await confirmWithPassword(app, request, {
        field: 'currentPassword',
        password: currentPassword,
        otherIssues: problem === undefined ? [] : [{ field: 'newPassword', message: problem }],
        secondFactorCode: code,
      })
      // Once the current password is confirmed (a wrong one is its field's error), and before the
      // second factor, so that a change that would change nothing spends no code.
      if (request.body.newPassword === currentPassword) {
        throw new ApiError('password_unchanged', undefined, [{ field: 'newPassword', message: 'is your current password: choose another one' }])
      }
      // Hashed before the account's row is locked for the code and the change: Argon2 takes a while.
      const passwordHash = await hashPassword(request.body.newPassword)
      const credentialEpoch = await withSecondFactor(app, request, confirmed, { code }, async (transaction) => {
        // Voids every known-browser cookie of the account (copies of one included).
        const epoch = await createAccountRepository(transaction).setPasswordHash(confirmed.id, passwordHash)
        if (epoch === undefined) throw new ApiError('unauthorized', 'The account was deleted.')
        const endedSessions = await createSessionRepository(transaction).deleteOthers(confirmed.id, confirmed.sessionId)
        await recordAudit(transaction, request, { action: 'account.password_changed', details: { endedSessions } })
        return epoch
      })
      // This browser has just given the password: it stays known, with a cookie of the new epoch.
      rememberDevice(reply, app.keyRing.macKeyFor('device'), passwordDevice(confirmed.emailKey, { id: confirmed.id, credentialEpoch }), app.config)
      return reply.code(204).send(null)
    },
  )

  app.delete(
    '/me',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Delete the account',
        description:
          'From a logged-in session only (403 forbidden with an API key), with the account\'s password (a wrong one is a 400 ' +
          'validation_error on password, counted against the log-in budget: 429 rate_limited beyond), and while two-factor ' +
          'authentication is on a code of the second factor, as a password change. Deletes the account ' +
          'and everything of it at once: its sites (their site keys and secret keys stop working on every instance), stats, ' +
          'webhook settings and deliveries, sessions and API keys; the sites\' verification logs follow in the background. ' +
          'Clears the session cookie. Cannot be undone.',
        sessionOnly: 'delete the account',
        body: AccountDeletion,
        response: { 204: Type.Null(), 400: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
        responseHeaders: { 204: { 'Set-Cookie': { type: 'string', description: `${sessionCookieName(app.config)} cleared (Max-Age=0)` } } },
      },
    },
    async (request, reply) => {
      const { id } = accountOf(request)
      const { password, code } = request.body
      const { siteIds } = await confirmAccountChange(app, request, { field: 'password', password, code, deletesAccount: true }, async (transaction) => {
        const logQueries = createVerificationQueryRepository(transaction)
        return createAccountRepository(transaction).delete(id, async (ids) => {
          for (const siteId of ids) await logQueries.deleteRollupsOf(siteId)
        })
      })
      await Promise.all(siteIds.map((siteId) => app.siteCache.invalidate({ id: siteId })))
      if (siteIds.length > 0) app.logRetention.sweepAfterDeletion()
      // The account's audit log went with it: the server's log keeps who deleted it, and from where.
      request.log.info({ accountId: id, sites: siteIds.length, clientIp: request.ip }, 'account deleted')
      // The last account gone: the next first sign-up needs a new code (the old one is void).
      // The account is gone whatever this finds: a failure to tell is logged, not answered.
      await announceSetupCode(app, request.log).catch((error: unknown) => request.log.warn({ err: error }, 'could not tell the new setup code'))
      clearSessionCookie(reply, app.config)
      return reply.code(204).send(null)
    },
  )

  await app.register(twoFactorRoutes)
  await app.register(passkeyRoutes)
}

export default meRoutes
