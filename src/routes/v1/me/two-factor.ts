import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import {
  hashRecoveryCode,
  matchingTotpStep,
  newRecoveryCodes,
  newTotpSecret,
  normalizeRecoveryCode,
  openSetup,
  otpauthUriOf,
  RECOVERY_CODE_COUNT,
  sealSetup,
  sealTotpSecret,
  SETUP_LIFETIME_MS,
} from '../../../domain/accounts/two-factor.js'
import { ApiError, type ErrorDetail } from '../../../errors.js'
import { accountOf, sessionIdOf } from '../../../plugins/authentication.js'
import { createTwoFactorRepository, type TwoFactorState } from '../../../storage/sql/two-factor-repository.js'
import { rememberDevice, secondFactorDevice } from '../sessions/known-device.js'
import { auditedTransaction, recordAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, CurrentPassword, ErrorResponse, SecondFactorCode } from '../dashboard-schemas.js'
import { confirmAccountChange, confirmationStillHolds, confirmWithPassword } from './account-confirmation.js'

const TwoFactorStatus = Type.Object({
  enabled: Type.Boolean(),
  enabledAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  recoveryCodesLeft: Type.Integer({ minimum: 0, description: 'Unused recovery codes (0 while two-factor is off)' }),
})

const TwoFactorSetup = Type.Object({
  secret: Type.String({ description: 'The shared secret in base32, for typing into an authenticator app by hand' }),
  otpauthUri: Type.String({ description: 'The otpauth://totp/ address to show as a QR code (SHA-1, 6 digits, 30 seconds)' }),
  setupToken: Type.String({ description: `The setup, sealed for this account: send it back with the app's first code within ${SETUP_LIFETIME_MS / 60_000} minutes` }),
})

const RecoveryCodes = Type.Object({
  recoveryCodes: Type.Array(Type.String(), {
    minItems: RECOVERY_CODE_COUNT,
    maxItems: RECOVERY_CODE_COUNT,
    description: 'One-time codes that stand in for the authenticator app, shown only now: each logs in once',
  }),
})

const Enabling = Type.Object(
  {
    setupToken: Type.String({ maxLength: 1000 }),
    code: Type.String({ maxLength: 100, description: "The authenticator app's current code for the setup's secret" }),
    password: CurrentPassword,
  },
  { additionalProperties: false },
)

const Confirmation = Type.Object({ password: CurrentPassword, code: SecondFactorCode }, { additionalProperties: false })

const turnedOn = () => new ApiError('conflict', 'Two-factor authentication is on already; turn it off first to set up another app.')

/** A fresh set of recovery codes, and the hashes the database keeps of them. */
function recoveryCodeSet(): { codes: string[]; hashes: string[] } {
  const codes = newRecoveryCodes()
  return { codes, hashes: codes.map((code) => hashRecoveryCode(normalizeRecoveryCode(code) ?? code)) }
}

/**
 * Two-factor authentication of the account's log-ins, from a logged-in session only (an API key
 * may neither read nor change it). Turning it on, off, and new recovery codes ask for the password;
 * turning it off and new recovery codes for a code of the second factor too (confirmAccountChange,
 * as a password change and the account's deletion do while it is on).
 */
const twoFactorRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const twoFactor = createTwoFactorRepository(app.database)
  const key = app.keyRing.keyFor('two-factor')

  const statusOf = (state: TwoFactorState | undefined): Type.Static<typeof TwoFactorStatus> => ({
    enabled: state !== undefined,
    enabledAt: state === undefined ? null : state.enabledAt.toISOString(),
    recoveryCodesLeft: state?.recoveryCodesLeft ?? 0,
  })

  app.get(
    '/me/two-factor',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Whether log-ins ask for a second factor',
        description: 'From a logged-in session only (403 forbidden with an API key).',
        sessionOnly: 'read the two-factor settings',
        response: { 200: TwoFactorStatus, ...authenticatedErrors },
      },
    },
    async (request) => {
      sessionIdOf(request)
      return statusOf(await twoFactor.stateOf(accountOf(request).id))
    },
  )

  app.post(
    '/me/two-factor/setup',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Start setting up an authenticator app',
        description:
          'A new secret for an authenticator app (as a QR code of otpauthUri, or typed in), and the setup token to send back with the ' +
          "app's first code to POST /api/v1/me/two-factor. Nothing is stored until then. 409 conflict when two-factor is on already. " +
          'From a logged-in session only (403 forbidden with an API key).',
        sessionOnly: 'set up two-factor authentication',
        response: { 200: TwoFactorSetup, 409: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request) => {
      sessionIdOf(request)
      const account = await app.accounts.findById(accountOf(request).id)
      if (account === undefined) throw new ApiError('unauthorized')
      if ((await twoFactor.stateOf(account.id)) !== undefined) throw turnedOn()
      const secret = newTotpSecret()
      return { secret, otpauthUri: otpauthUriOf(secret, account.email), setupToken: sealSetup(key, account.id, secret, Date.now()) }
    },
  )

  app.post(
    '/me/two-factor',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Turn two-factor authentication on',
        description:
          "With the setup token, the app's current code for it and the account's password (each wrong one a 400 validation_error on its field; " +
          'the password counted against the log-in budget: 429 rate_limited beyond). From then on a log-in needs a code as well ' +
          '(POST /api/v1/sessions answers 401 two_factor_required without one). Answers the recovery codes, once. Sessions already open stay. ' +
          '409 conflict when it is on already. From a logged-in session only (403 forbidden with an API key).',
        sessionOnly: 'turn two-factor authentication on',
        body: Enabling,
        response: { 200: RecoveryCodes, 400: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { setupToken, code, password } = request.body
      const { id } = accountOf(request)
      const issues: ErrorDetail[] = []
      const setup = openSetup(key, id, setupToken, Date.now())
      const step = 'secret' in setup ? matchingTotpStep(setup.secret, code) : undefined
      if ('problem' in setup) {
        issues.push({ field: 'setupToken', message: setup.problem === 'expired' ? 'has expired: start the setup again' : 'is not a setup of this account: start the setup again' })
      } else if (step === undefined) {
        issues.push({ field: 'code', message: "is not the app's current code: check that the phone's clock is right" })
      }
      const confirmed = await confirmWithPassword(app, request, { field: 'password', password, otherIssues: issues })
      if (!('secret' in setup) || step === undefined) throw new Error('a setup without a confirmed code passed validation')
      const { codes, hashes } = recoveryCodeSet()
      const sealed = sealTotpSecret(key, id, setup.secret)
      const enabledAt = await auditedTransaction(app, request, async (transaction) => {
        const since = await createTwoFactorRepository(transaction).enable(id, sealed, step, hashes)
        if (since === undefined) throw turnedOn()
        // The row is locked now: checked after, a password change that committed before is seen.
        await confirmationStillHolds(transaction, confirmed)
        await recordAudit(transaction, request, { action: 'account.two_factor_enabled' })
        return since
      })
      // This browser has just given a code: its later log-ins are the owner's (enforceSecondFactorBudgets).
      rememberDevice(reply, app.keyRing.macKeyFor('device'), secondFactorDevice(confirmed.emailKey, enabledAt), app.config)
      return { recoveryCodes: codes }
    },
  )

  app.delete(
    '/me/two-factor',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'Turn two-factor authentication off',
        description:
          'With the password and a code of the second factor (the app\'s current code or an unused recovery code): a wrong one of either, or no ' +
          'code, is a 400 validation_error on its field; wrong ones count against their budgets (429 rate_limited beyond). Forgets the secret and the recovery codes. ' +
          '409 conflict when it is off. From a logged-in session only (403 forbidden with an API key).',
        sessionOnly: 'turn two-factor authentication off',
        body: Confirmation,
        response: { 204: Type.Null(), 400: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { password, code } = request.body
      await confirmAccountChange(app, request, { field: 'password', password, code, onlyWithTwoFactor: true }, async (transaction) => {
        await createTwoFactorRepository(transaction).disable(accountOf(request).id)
        await recordAudit(transaction, request, { action: 'account.two_factor_disabled' })
      })
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/me/two-factor/recovery-codes',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'New recovery codes',
        description:
          `${RECOVERY_CODE_COUNT} new recovery codes, shown once; the old ones, used or not, stop working. With the password and a code of the second ` +
          'factor, as turning it off. 409 conflict when two-factor is off. From a logged-in session only (403 forbidden with an API key).',
        sessionOnly: 'make new recovery codes',
        body: Confirmation,
        response: { 200: RecoveryCodes, 400: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request) => {
      const { codes, hashes } = recoveryCodeSet()
      const { password, code } = request.body
      await confirmAccountChange(app, request, { field: 'password', password, code, onlyWithTwoFactor: true }, async (transaction) => {
        await createTwoFactorRepository(transaction).replaceRecoveryCodes(accountOf(request).id, hashes)
        await recordAudit(transaction, request, { action: 'account.recovery_codes_regenerated' })
      })
      return { recoveryCodes: codes }
    },
  )
}

export default twoFactorRoutes
