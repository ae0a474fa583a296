import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { findPasswordProblem, hashPassword, isPasswordCorrect, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../../domain/accounts/password.js'
import { ApiError, throwIfInvalid, type ErrorDetail } from '../../../errors.js'
import { accountOf } from '../../../plugins/authentication.js'
import { createAccountRepository } from '../../../storage/sql/account-repository.js'
import { createSessionRepository } from '../../../storage/sql/session-repository.js'
import { credentialRateLimits, enforceRateLimits } from '../accounts/rate-limits.js'
import { Account, authenticatedErrors, dashboardSecurity, ErrorResponse } from '../dashboard-schemas.js'

const PasswordChange = Type.Object(
  {
    currentPassword: Type.String({ maxLength: 1000 }),
    newPassword: Type.String({ maxLength: 1000, description: `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters` }),
  },
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
          '(429 rate_limited beyond). Every other session of the account ends; this one and the API keys stay.',
        security: dashboardSecurity,
        body: PasswordChange,
        response: { 204: Type.Null(), 400: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const authentication = request.authentication
      if (authentication?.method !== 'session') {
        throw new ApiError('forbidden', 'The password is changed from a logged-in session (the dashboard), not with an API key.')
      }
      const { id } = accountOf(request)
      // A stolen session must not be a free guessing oracle for the password.
      await enforceRateLimits(app.keyValue, [{ key: `password-change:${id}`, rule: credentialRateLimits.logInPerEmailAndIp }])
      const account = await app.accounts.findWithPasswordById(id)
      if (account === undefined) throw new ApiError('unauthorized')
      const problem = findPasswordProblem(request.body.newPassword)
      const issues: ErrorDetail[] = problem === undefined ? [] : [{ field: 'newPassword', message: problem }]
      if (!(await isPasswordCorrect(account.passwordHash, request.body.currentPassword))) {
        issues.unshift({ field: 'currentPassword', message: 'is not your current password' })
      }
      throwIfInvalid(issues)
      const passwordHash = await hashPassword(request.body.newPassword)
      await app.database.transaction(async (transaction) => {
        await createAccountRepository(transaction).setPasswordHash(id, passwordHash)
        await createSessionRepository(transaction).deleteOthers(id, authentication.sessionId)
      })
      return reply.code(204).send(null)
    },
  )
}

export default meRoutes
