import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { EMAIL_MAX_LENGTH, isEmailAddress, normalizeEmailAddress } from '../../../domain/accounts/email-address.js'
import { findPasswordProblem, hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../../domain/accounts/password.js'
import { addressGroupOf } from '../../../domain/history/client-keys.js'
import { ApiError, throwIfInvalid, type ErrorDetail } from '../../../errors.js'
import { rejectCrossOriginForm } from '../../../plugins/authentication.js'
import { Account, ErrorResponse } from '../dashboard-schemas.js'
import { credentialRateLimits, emailKeyOf, enforceRateLimits } from './rate-limits.js'

export const Credentials = Type.Object(
  {
    email: Type.String({ maxLength: 1000, description: `An e-mail address, at most ${EMAIL_MAX_LENGTH} characters` }),
    password: Type.String({ maxLength: 1000, description: `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters` }),
  },
  { additionalProperties: false },
)

function validateSignUp(email: string, password: string): ErrorDetail[] {
  const issues: ErrorDetail[] = []
  if (!isEmailAddress(email)) issues.push({ field: 'email', message: 'must be an e-mail address such as you@example.com' })
  const problem = findPasswordProblem(password)
  if (problem !== undefined) issues.push({ field: 'password', message: problem })
  return issues
}

const accountsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/accounts',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Sign up',
        description: 'Creates an account. Log in afterwards with POST /api/v1/sessions.',
        body: Credentials,
        response: { 201: Account, 400: ErrorResponse, 403: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse },
      },
    },
    async (request, reply) => {
      rejectCrossOriginForm(request, app.config)
      const email = normalizeEmailAddress(request.body.email)
      await enforceRateLimits(app.keyValue, [
        { key: `signup:ip:${addressGroupOf(request.ip)}`, rule: credentialRateLimits.signUpPerIp },
        { key: `signup:email:${emailKeyOf(email)}`, rule: credentialRateLimits.signUpPerEmail },
      ])
      const issues = validateSignUp(email, request.body.password)
      throwIfInvalid(issues)
      const account = await app.accounts.create(email, await hashPassword(request.body.password))
      if (account === undefined) throw new ApiError('email_taken')
      return reply.code(201).send({ id: account.id, email: account.email, createdAt: account.createdAt.toISOString() })
    },
  )
}

export default accountsRoutes
