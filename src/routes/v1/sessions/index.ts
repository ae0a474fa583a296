import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { normalizeEmailAddress } from '../../../domain/accounts/email-address.js'
import { isPasswordCorrect } from '../../../domain/accounts/password.js'
import { generateSessionToken, hashToken } from '../../../domain/accounts/tokens.js'
import { ApiError } from '../../../errors.js'
import {
  accountOf,
  clearSessionCookie,
  rejectCrossOriginForm,
  sessionCookieName,
  SESSION_LIFETIME_MS,
  setSessionCookie,
} from '../../../plugins/authentication.js'
import { Credentials } from '../accounts/index.js'
import { enforceRateLimits, passwordAttemptBudgets } from '../accounts/rate-limits.js'
import { Account, authenticatedErrors, dashboardSecurity, ErrorResponse } from '../dashboard-schemas.js'

const sessionsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/sessions',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Log in',
        description: `Answers the account and sets the HttpOnly session cookie ${sessionCookieName(app.config)} (valid ${SESSION_LIFETIME_MS / 86_400_000} days or until logout).`,
        body: Credentials,
        response: { 200: Account, 401: ErrorResponse, 403: ErrorResponse, 429: ErrorResponse },
      },
    },
    async (request, reply) => {
      rejectCrossOriginForm(request, app.config)
      const email = normalizeEmailAddress(request.body.email)
      await enforceRateLimits(app.keyValue, passwordAttemptBudgets(email, request.ip))
      const account = await app.accounts.findByEmail(email)
      // Runs Argon2 even for an unknown address, so timing does not reveal which addresses exist.
      const isCorrect = await isPasswordCorrect(account?.passwordHash, request.body.password)
      if (account === undefined || !isCorrect) throw new ApiError('invalid_credentials')
      const token = generateSessionToken()
      const expiresAt = new Date(Date.now() + SESSION_LIFETIME_MS)
      // A password change that commits meanwhile makes the password just checked a wrong one.
      const sessionId = await app.sessions.create(account, hashToken(token), expiresAt)
      if (sessionId === undefined) throw new ApiError('invalid_credentials')
      setSessionCookie(reply, token, expiresAt, app.config)
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
        description: 'Ends the session of the cookie at once, on every instance.',
        security: dashboardSecurity,
        response: { 204: Type.Null(), 400: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const authentication = request.authentication
      if (authentication?.method !== 'session') {
        throw new ApiError('validation_error', 'Only a cookie session can log out; revoke API keys with DELETE /api/v1/api-keys/{id}.')
      }
      await app.sessions.delete(authentication.sessionId)
      clearSessionCookie(reply, app.config)
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
        description: 'Ends every other session of the account at once (a browser left logged in elsewhere, a session that is not yours); this one and the API keys stay.',
        security: dashboardSecurity,
        response: { 200: Type.Object({ endedSessions: Type.Integer({ minimum: 0 }) }), ...authenticatedErrors },
      },
    },
    async (request) => {
      const authentication = request.authentication
      if (authentication?.method !== 'session') {
        throw new ApiError('forbidden', 'Only a logged-in session (the dashboard) may end the other sessions, not an API key.')
      }
      return { endedSessions: await app.sessions.deleteOthers(accountOf(request).id, authentication.sessionId) }
    },
  )
}

export default sessionsRoutes
