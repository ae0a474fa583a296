import type { FastifyInstance, FastifyRequest } from 'fastify'
import { isPasswordCorrect } from '../../../domain/accounts/password.js'
import { hashRecoveryCode, isTotpShaped, matchingTotpStep, normalizeRecoveryCode, openTotpSecret } from '../../../domain/accounts/two-factor.js'
import { ApiError, throwIfInvalid, type ErrorDetail } from '../../../errors.js'
import { accountOf, sessionIdOf } from '../../../plugins/authentication.js'
import type { SqlExecutor } from '../../../storage/ports.js'
import { createTwoFactorRepository, type TwoFactorState } from '../../../storage/sql/two-factor-repository.js'
import { recordRepeatedAudit } from '../audit-log/audit-trail.js'
import { enforcePasswordAttemptBudgets } from '../accounts/rate-limits.js'

/**
 * What a change to the account itself asks of the request: a logged-in session (an API key, if
 * it leaked, must not take the account over or delete it) and the account's password, checked
 * within the log-in budget (a stolen session must not be a free guessing oracle for it). Throws
 * a validation_error naming `field` for a wrong password, together with `otherIssues`. The
 * attempt counts against the log-in's budgets of this client and account, so that someone else
 * guessing from a stolen session does not lock the owner out of changing the password. Answers
 * the account's id and e-mail key (its rate limits'), the session's id, and since when two-factor
 * is on (null: off).
 */
export async function confirmWithPassword(
  app: FastifyInstance,
  request: FastifyRequest,
  what: string,
  check: { field: string; password: string; otherIssues?: ErrorDetail[] },
): Promise<{ id: string; email: string; emailKey: string; sessionId: string; twoFactorEnabledAt: Date | null }> {
  const sessionId = sessionIdOf(request, what)
  const { id } = accountOf(request)
  const account = await app.accounts.findWithPasswordById(id)
  if (account === undefined) throw new ApiError('unauthorized')
  const emailKey = await enforcePasswordAttemptBudgets(app, request, account.email)
  const issues = [...(check.otherIssues ?? [])]
  if (!(await isPasswordCorrect(account.passwordHash, check.password))) {
    issues.unshift({ field: check.field, message: 'is not your current password' })
    // A stolen session guessing the password it needs to take the account over shows here.
    await recordRepeatedAudit(app.database, request, { action: 'account.password_check_failed' })
  }
  throwIfInvalid(issues)
  return { id, email: account.email, emailKey, sessionId, twoFactorEnabledAt: account.twoFactorEnabledAt }
}

/** How a second factor was proven. */
export type SecondFactor = { kind: 'authenticator' } | { kind: 'recovery-code'; recoveryCodesLeft: number }

/**
 * Takes a code of the account's second factor, in `executor`'s transaction: an authenticator code
 * of the steps around now, after the last one taken (so a code works once, even sent twice at the
 * same moment), or an unused recovery code, which is used up. Undefined for anything else. The
 * caller has counted the attempt (enforceSecondFactorBudgets).
 */
export async function takeSecondFactor(
  app: FastifyInstance,
  executor: SqlExecutor,
  accountId: string,
  state: Pick<TwoFactorState, 'sealedSecret'>,
  code: string,
): Promise<SecondFactor | undefined> {
  const repository = createTwoFactorRepository(executor)
  if (isTotpShaped(code)) {
    let secret: string
    try {
      secret = openTotpSecret(app.keyRing.keyFor('two-factor'), accountId, state.sealedSecret)
    } catch (error) {
      // Sealed under another server secret (one adopted without sealing again): only a recovery
      // code, or the operator's `npm run account -- disable-two-factor`, opens the account now.
      app.log.error({ err: error, accountId }, "the account's authenticator secret cannot be decrypted with this server's secret")
      return undefined
    }
    const step = matchingTotpStep(secret, code)
    return step !== undefined && (await repository.takeStep(accountId, step)) ? { kind: 'authenticator' } : undefined
  }
  const normalized = normalizeRecoveryCode(code)
  if (normalized === undefined) return undefined
  const recoveryCodesLeft = await repository.takeRecoveryCode(accountId, hashRecoveryCode(normalized))
  return recoveryCodesLeft === undefined ? undefined : { kind: 'recovery-code', recoveryCodesLeft }
}

/** The account's wrong second-factor codes, for its owner: one event an hour, with a count and the addresses. */
export function recordSecondFactorFailure(app: FastifyInstance, request: FastifyRequest, accountId: string): Promise<void> {
  return recordRepeatedAudit(app.database, request, { action: 'account.two_factor_failed', accountId })
}
