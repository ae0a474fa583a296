import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { EMAIL_MAX_LENGTH, isEmailAddress, normalizeEmailAddress } from '../../../domain/accounts/email-address.js'
import { findPasswordProblem, hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PASSWORD_RULES } from '../../../domain/accounts/password.js'
import { isFirstAccountSetupCode } from '../../../domain/accounts/setup-code.js'
import { ApiError, throwIfInvalid, type ErrorDetail } from '../../../errors.js'
import { rejectCrossOriginForm } from '../../../plugins/authentication.js'
import { recordAudit } from '../audit-log/audit-trail.js'
import { createAccountRepository } from '../../../storage/sql/account-repository.js'
import { Account, ErrorResponse } from '../dashboard-schemas.js'
import { announceSetupCode } from './announce-setup-code.js'
import { clientKeyOf, credentialRateLimits, emailKeyOf, enforceRateLimits } from './rate-limits.js'

const emailDescription = `An e-mail address, at most ${EMAIL_MAX_LENGTH} characters`
const passwordDescription = `${PASSWORD_RULES} (400 validation_error on password otherwise)`

/** The address as the log-in and the sign-up take it: the handlers check its form (400 validation_error). */
export const EmailProperty = Type.String({ maxLength: 1000, description: emailDescription })

function validateSignUp(email: string, password: string): ErrorDetail[] {
  const issues: ErrorDetail[] = []
  if (!isEmailAddress(email)) issues.push({ field: 'email', message: 'must be an e-mail address such as you@example.com' })
  const problem = findPasswordProblem(password, email)
  if (problem !== undefined) issues.push({ field: 'password', message: problem })
  return issues
}

const setupCodeProperty = Type.Optional(
  Type.String({
    maxLength: 100,
    description: 'Under SIGNUPS=first (the production default), the setup code the server logs at start while it has no account; required then',
  }),
)

const SignUpBody = Type.Object(
  {
    email: EmailProperty,
    password: Type.String({ maxLength: PASSWORD_MAX_LENGTH, description: passwordDescription }),
    setupCode: setupCodeProperty,
  },
  { additionalProperties: false },
)

/** The sign-up body with the limits the handler checks, for the OpenAPI document (schema.documentedBody). */
const DocumentedSignUpBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: EMAIL_MAX_LENGTH, description: emailDescription }),
    password: Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH, description: passwordDescription }),
    setupCode: setupCodeProperty,
  },
  { additionalProperties: false },
)

const SignUpStatus = Type.Object(
  {
    open: Type.Boolean({ description: 'Whether POST /api/v1/accounts would create an account now (SIGNUPS: open; first while no account exists)' }),
    setupCodeRequired: Type.Boolean({ description: "Whether a sign-up needs setupCode, the code in the server's log (SIGNUPS=first, while no account exists); false while sign-ups are closed" }),
  },
  { additionalProperties: false },
)

const accountsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { signUps } = app.config
  const isSignUpOpen = async () => signUps === 'open' || (signUps === 'first' && !(await app.accounts.exists()))
  // Until the first account exists, whoever reaches a fresh instance first would get it: under
  // SIGNUPS=first the sign-up needs a code only the server's log shows.
  const needsSetupCode = signUps === 'first'
  if (needsSetupCode) app.addHook('onReady', () => announceSetupCode(app))

  app.get(
    '/sign-up',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Whether sign-ups are open',
        description: 'No authentication. The dashboard shows its sign-up form only when they are.',
        response: { 200: SignUpStatus },
      },
    },
    async () => {
      const open = await isSignUpOpen()
      // A closed sign-up needs nothing: no code is asked for then.
      return { open, setupCodeRequired: open && needsSetupCode }
    },
  )

  app.post(
    '/accounts',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Sign up',
        description:
          'Creates an account. Log in afterwards with POST /api/v1/sessions. The server\'s SIGNUPS setting may allow only the first ' +
          'account (the production default) or none: then 403 sign_up_closed (GET /api/v1/sign-up tells beforehand). ' +
          'Under SIGNUPS=first the first account also needs setupCode, the code the server logs at start: else 403 setup_code_invalid.',
        body: SignUpBody,
        documentedBody: DocumentedSignUpBody,
        response: { 201: Account, 400: ErrorResponse, 403: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse },
        errorCodes: ['email_taken', 'sign_up_closed', 'setup_code_invalid'],
      },
    },
    async (request, reply) => {
      rejectCrossOriginForm(request, app.config)
      // Before the limits and the password's hashing: a closed server spends nothing on the request.
      if (!(await isSignUpOpen())) throw new ApiError('sign_up_closed')
      const email = normalizeEmailAddress(request.body.email)
      await enforceRateLimits(app.keyValue, [
        { key: `signup:ip:${clientKeyOf(app, request.ip)}`, rule: credentialRateLimits.signUpPerIp, what: 'sign-ups from this address' },
        { key: `signup:email:${emailKeyOf(email)}`, rule: credentialRateLimits.signUpPerEmail, what: 'sign-ups with this e-mail address' },
      ])
      if (needsSetupCode && !isFirstAccountSetupCode(app.keyRing, await app.accounts.createdCount(), request.body.setupCode ?? '')) {
        // The code changed because another sign-up made the first account meanwhile.
        if (await app.accounts.exists()) throw new ApiError('sign_up_closed')
        const message = request.body.setupCode === undefined ? 'is required: the server logs it at start' : "is not the code in the server's log"
        throw new ApiError('setup_code_invalid', undefined, [{ field: 'setupCode', message }])
      }
      const issues = validateSignUp(email, request.body.password)
      throwIfInvalid(issues)
      const passwordHash = await hashPassword(request.body.password)
      const account = await app.database.transaction(async (transaction) => {
        const accounts = createAccountRepository(transaction)
        const created = signUps === 'first' ? await accounts.createFirst(email, passwordHash) : await accounts.create(email, passwordHash)
        if (typeof created === 'object') await recordAudit(transaction, request, { action: 'account.created', accountId: created.id })
        return created
      })
      // Another first account was made while this password was being hashed.
      if (account === 'accounts_exist') throw new ApiError('sign_up_closed')
      if (account === undefined) throw new ApiError('email_taken')
      return reply.code(201).send({ id: account.id, email: account.email, createdAt: account.createdAt.toISOString() })
    },
  )
}

export default accountsRoutes
