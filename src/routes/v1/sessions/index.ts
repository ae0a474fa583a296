import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { normalizeEmailAddress } from '../../../domain/accounts/email-address.js'
import { isPasswordCorrect } from '../../../domain/accounts/password.js'
import { generateSessionToken, hashToken } from '../../../domain/accounts/tokens.js'
import { addressGroupOf } from '../../../domain/history/client-keys.js'
import { ApiError } from '../../../errors.js'
import {
  clearSessionCookie,
  rejectCrossOriginForm,
  sessionCookieName,
  SESSION_LIFETIME_MS,
  setSessionCookie,
} from '../../../plugins/authentication.js'
import { Credentials } from '../accounts/index.js'
import { credentialRateLimits, emailKeyOf, enforceRateLimits } from '../accounts/rate-limits.js'
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
      const client = addressGroupOf(request.ip)
      const emailKey = emailKeyOf(email)
      await enforceRateLimits(app.keyValue, [
        { key: `login:email-ip:${emailKey}:${client}`, rule: credentialRateLimits.logInPerEmailAndIp },
        { key: `login:ip:${client}`, rule: credentialRateLimits.logInPerIp },
        { key: `login:email:${emailKey}`, rule: credentialRateLimits.logInPerEmail },
      ])
      const account = await app.accounts.findByEmail(email)
      // Runs Argon2 even for an unknown address, so timing does not reveal which addresses exist.
      const isCorrect = await isPasswordCorrect(account?.passwordHash, request.body.password)
      if (account === undefined || !isCorrect) throw new ApiError('invalid_credentials')
      const token = generateSessionToken()
      const expiresAt = new Date(Date.now() + SESSION_LIFETIME_MS)
      await app.sessions.create(account.id, hashToken(token), expiresAt)
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
}

export default sessionsRoutes
