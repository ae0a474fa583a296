import type { FastifyInstance, FastifyRequest } from 'fastify'
import { isPasswordCorrect } from '../../../domain/accounts/password.js'
import { hashRecoveryCode, isTotpShaped, matchingTotpStep, normalizeRecoveryCode, openTotpSecret } from '../../../domain/accounts/two-factor.js'
import { ApiError, invalidRequest, throwIfInvalid, type ErrorDetail } from '../../../errors.js'
import { accountOf, sessionIdOf } from '../../../plugins/authentication.js'
import type { SqlExecutor } from '../../../storage/ports.js'
import { createAccountRepository } from '../../../storage/sql/account-repository.js'
import { createTwoFactorRepository, type TwoFactorState } from '../../../storage/sql/two-factor-repository.js'
import { recordAudit, recordRepeatedAudit } from '../audit-log/audit-trail.js'
import { enforcePasswordAttemptBudgets, enforceSecondFactorBudgets, giveBack, givenBackOnceRight } from '../accounts/rate-limits.js'

/** The message of a validation_error on `code` for a code that is neither. */
const WRONG_CODE = "is not the authenticator app's current code, nor an unused recovery code"
const CODE_REQUIRED = 'is required: two-factor authentication is on'
const NOT_CURRENT_PASSWORD = 'is not your current password'

interface PasswordCheck {
  /** The body's field of the password, named by a validation_error when it is wrong. */
  field: string
  password: string
  /** The body's other problems, answered together with a wrong password's. */
  otherIssues?: ErrorDetail[]
}

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
  check: PasswordCheck & { secondFactorCode?: string | undefined },
): Promise<PasswordConfirmation> {
  const sessionId = sessionIdOf(request)
  const { id } = accountOf(request)
  const account = await app.accounts.findWithPasswordById(id)
  if (account === undefined) throw new ApiError('unauthorized')
  const { emailKey, attempt } = await enforcePasswordAttemptBudgets(app, request, account.email, account)
  const issues = [...(check.otherIssues ?? [])]
  if (await isPasswordCorrect(account.passwordHash, check.password)) {
    // The right password is no guess: the owner's changes in a row do not spend the log-in's budgets.
    await giveBack(request, attempt)
  } else {
    issues.unshift({ field: check.field, message: NOT_CURRENT_PASSWORD })
    // A stolen session guessing the password it needs to take the account over shows here.
    await recordRepeatedAudit(app.database, request, { action: 'account.password_check_failed' })
  }
  if ('secondFactorCode' in check && account.twoFactorEnabledAt !== null && (check.secondFactorCode ?? '').trim() === '') {
    issues.push({ field: 'code', message: CODE_REQUIRED })
  }
  throwIfInvalid(issues)
  return { id, email: account.email, emailKey, sessionId, twoFactorEnabledAt: account.twoFactorEnabledAt, passwordHash: account.passwordHash, passwordField: check.field }
}

/** A request's password, confirmed: the account's id and e-mail key (its rate limits'), the session's id, since when two-factor is on (null: off). */
export interface PasswordConfirmation {
  id: string
  email: string
  emailKey: string
  sessionId: string
  twoFactorEnabledAt: Date | null
  /** The hash the password was checked against, and its field in the body: for confirmationStillHolds. */
  passwordHash: string
  passwordField: string
}

/**
 * Throws when what confirmWithPassword confirmed no longer holds, in the transaction that makes
 * the change with the account's row locked: a password changed meanwhile is a wrong password now
 * (400 on its field), a session ended meanwhile (as a password change ends the others) or an
 * account deleted is 401. Without it, a request that was checked just before the owner changed
 * the password, and so ended the session, would still go through.
 */
export async function confirmationStillHolds(transaction: SqlExecutor, confirmed: PasswordConfirmation): Promise<void> {
  const changed = await createAccountRepository(transaction).changedSinceConfirmation(confirmed.id, confirmed.passwordHash, confirmed.sessionId)
  if (changed === 'password') throw invalidRequest([{ field: confirmed.passwordField, message: NOT_CURRENT_PASSWORD }])
  if (changed === 'session') throw new ApiError('unauthorized', 'The session has ended.')
  if (changed === 'account') throw new ApiError('unauthorized', 'The account was deleted.')
}

/** What a change asks of the second factor: a code while two-factor is on, whether it must be on. */
interface SecondFactorCheck {
  code: string | undefined
  /** Two-factor off is a conflict (turning it off, new recovery codes). */
  onlyWithTwoFactor?: boolean
  /** The change deletes the account: its row is locked FOR UPDATE from the start. */
  deletesAccount?: boolean
}

/**
 * A change to the account confirmed by its password and, while two-factor authentication is on,
 * by a code of the second factor too (a stolen session that knows the password still cannot make
 * it): confirmWithPassword, then withSecondFactor.
 */
export async function confirmAccountChange<Result>(
  app: FastifyInstance,
  request: FastifyRequest,
  check: PasswordCheck & SecondFactorCheck,
  work: (transaction: SqlExecutor, factor: SecondFactor | undefined) => Promise<Result>,
): Promise<Result> {
  const { code, onlyWithTwoFactor, deletesAccount, ...passwordCheck } = check
  const confirmed = await confirmWithPassword(app, request, { ...passwordCheck, secondFactorCode: code })
  return withSecondFactor(app, request, confirmed, { code, onlyWithTwoFactor, deletesAccount }, work)
}

/**
 * After confirmWithPassword (`confirmed`): `work` in the transaction that takes the second
 * factor's code, with the account's row locked (so the account is there for the change's audit
 * event), given how the code was proven (undefined while two-factor is off). The code counts
 * against the second factor's budgets; a wrong one is a validation_error on `code` and changes
 * nothing. Two-factor turned on or off since the password's check is a conflict: the request was
 * made for the state gone by.
 */
export function withSecondFactor<Result>(
  app: FastifyInstance,
  request: FastifyRequest,
  confirmed: PasswordConfirmation,
  check: SecondFactorCheck,
  work: SecondFactorWork<Result>,
): Promise<Result> {
  return withSecondFactorTransactions(app, request, confirmed, check, (inTransaction) => inTransaction(work))
}

/** A change made in the transaction that took the second factor's code. */
type SecondFactorWork<Result> = (transaction: SqlExecutor, factor: SecondFactor | undefined) => Promise<Result>

/** Runs work in a transaction of its own that locks the account and takes the code first, as withSecondFactor's. */
export type SecondFactorTransaction = <Result>(work: SecondFactorWork<Result>) => Promise<Result>

/**
 * withSecondFactor for a change that may be tried in more than one transaction, each rolled back
 * but the last (auditedSiteTransaction starts anew when the site's owner changed while it waited):
 * `attempts` is given the transaction to run, as often as it needs. The code counts against the
 * budgets once for the request, and is given back once if a transaction took it, whatever the
 * change's answer then (a right code is no guess, even when the change is refused for another
 * reason: a member gone, the caller no longer the owner); each transaction takes the code again,
 * which a transaction rolled back did not spend, so the one that commits spends it, and a restart
 * neither counts the code twice nor refuses it as used.
 */
export async function withSecondFactorTransactions<Result>(
  app: FastifyInstance,
  request: FastifyRequest,
  confirmed: PasswordConfirmation,
  check: SecondFactorCheck,
  attempts: (inTransaction: SecondFactorTransaction) => Promise<Result>,
): Promise<Result> {
  const { id, emailKey, sessionId, twoFactorEnabledAt } = confirmed
  if (twoFactorEnabledAt === null && check.onlyWithTwoFactor === true) throw twoFactorOff()
  const attempt = twoFactorEnabledAt === null ? undefined : await enforceSecondFactorBudgets(app, request, emailKey, twoFactorEnabledAt, sessionId)
  // A right code is no guess either: it is given back, the change made or refused.
  return givenBackOnceRight(request, [attempt], (proveRight) => {
    const inTransaction: SecondFactorTransaction = async (work) => {
      const outcome = await app.database.transaction(async (transaction) => {
        const current = await createTwoFactorRepository(transaction).lockTwoFactor(id, check.deletesAccount)
        if (current === undefined) throw new ApiError('unauthorized', 'The account was deleted.')
        if ((current?.enabledAt.getTime() ?? null) !== (twoFactorEnabledAt?.getTime() ?? null)) {
          throw current === null && check.onlyWithTwoFactor === true
            ? twoFactorOff()
            : twoFactorChanged()
        }
        await confirmationStillHolds(transaction, confirmed)
        if (current === null) return { taken: true as const, result: await work(transaction, undefined) }
        const factor = await takeSecondFactor(app, transaction, id, current, (check.code ?? '').trim())
        if (factor === undefined) return { taken: false as const }
        proveRight()
        if (factor.kind === 'recovery-code') {
          await recordAudit(transaction, request, { action: 'account.recovery_code_used', details: { recoveryCodesLeft: factor.recoveryCodesLeft } })
        }
        return { taken: true as const, result: await work(transaction, factor) }
      })
      if (!outcome.taken) {
        await recordSecondFactorFailure(app, request, id)
        throw invalidRequest([{ field: 'code', message: WRONG_CODE }])
      }
      return outcome.result
    }
    return attempts(inTransaction)
  })
}

/**
 * The conflict of a change confirmed for the two-factor state gone by. Its detail names `code`, the
 * field whose asking changed, so that a client tells it from the route's other conflicts (a full
 * list of API keys) by more than the message.
 */
const twoFactorChanged = () =>
  new ApiError('conflict', 'Two-factor authentication was turned on or off meanwhile: try again.', [
    { field: 'code', message: 'was asked for, or not, by two-factor authentication as it was before this request' },
  ])

/** The conflict of a change that needs two-factor authentication on. */
const twoFactorOff = () => new ApiError('conflict', 'Two-factor authentication is off for this account.')

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
