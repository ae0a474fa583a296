import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AuthenticationResponseJSON } from '@simplewebauthn/server'
import { Type } from 'typebox'
import { signInOptionsFor, userHandleOf, verifyPasskeySignIn, type PasskeyRefusal } from '../../../domain/accounts/passkeys.js'
import { generateSessionToken, hashToken } from '../../../domain/accounts/tokens.js'
import { ApiError } from '../../../errors.js'
import { rejectCrossOriginForm, sessionCookieName, SESSION_LIFETIME_MS, setSessionCookie } from '../../../plugins/authentication.js'
import { createAccountRepository } from '../../../storage/sql/account-repository.js'
import { createPasskeyRepository } from '../../../storage/sql/passkey-repository.js'
import { createSessionRepository } from '../../../storage/sql/session-repository.js'
import { createTwoFactorRepository } from '../../../storage/sql/two-factor-repository.js'
import { auditActorOf, recordAudit, recordRepeatedAudit } from '../audit-log/audit-trail.js'
import { clientKeyOf, credentialRateLimits, emailKeyOf, enforceRateLimits, giveBack } from '../accounts/rate-limits.js'
import { Account, ErrorResponse } from '../dashboard-schemas.js'
import { keepPasskeyChallenge, PasskeyOptions, relyingPartyOfRequest, SignInAnswer, takePasskeyChallenge } from '../passkey-challenges.js'
import { deviceCookieName, passwordDevice, rememberDevice, secondFactorDevice } from './known-device.js'

const PasskeySignIn = Type.Object({ credential: SignInAnswer }, { additionalProperties: false })

const refused = (problem: string) => new ApiError('passkey_invalid', `The passkey's answer does not verify: ${problem}.`)

/**
 * Logging in with a passkey: options with a challenge (kept in the key-value store, single use,
 * five minutes), then the browser's signed answer, which opens the session a password log-in
 * opens. The passkey was made with user verification and is checked with it, so it stands for the
 * password and the second factor together: an account with two-factor on is not asked for a code.
 * The answer counts against the password log-in's budget of the client (30 per 10 minutes), the
 * only one that applies before the answer names its account, and the options against a budget of
 * their own of the same size; the answer cannot be guessed, so no budget of the account's is
 * needed, and none that strangers could spend to lock its owner out. An answer of a known passkey
 * that is refused is told to its owner's audit log (account.passkey_refused, one event an hour).
 */
const passkeySignInRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const passkeys = createPasskeyRepository(app.database)
  const countClientAttempt = (clientIp: string, budget: 'login' | 'passkey-options') =>
    enforceRateLimits(app.keyValue, [{
      key: `${budget}:ip:${clientKeyOf(app, clientIp)}`,
      rule: credentialRateLimits.logInPerIp,
      what: budget === 'login' ? 'log-in attempts from this address' : 'passkey log-ins started from this address',
    }])

  app.post(
    '/sessions/passkey/options',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Start logging in with a passkey',
        description:
          'Options for navigator.credentials.get (no credentials listed: the browser offers the passkeys it holds for this host; user verification required), ' +
          'whose challenge may be answered once, within 5 minutes, with POST /api/v1/sessions/passkey. At most 30 per 10 minutes from one client (429 rate_limited beyond).',
        response: { 200: PasskeyOptions, 403: ErrorResponse, 429: ErrorResponse },
      },
    },
    async (request) => {
      rejectCrossOriginForm(request, app.config)
      // Each call keeps a challenge in the store for 5 minutes: not without bound for one client.
      await countClientAttempt(request.ip, 'passkey-options')
      const options = await signInOptionsFor(relyingPartyOfRequest(app, request))
      await keepPasskeyChallenge(app, options.challenge, { purpose: 'sign-in' })
      return options
    },
  )

  app.post(
    '/sessions/passkey',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Log in with a passkey',
        description:
          `Checks the browser's answer to the options of POST /api/v1/sessions/passkey/options and opens the session a password log-in opens (the cookie ${sessionCookieName(app.config)}), ` +
          'also for an account with two-factor authentication on (the passkey verified its user). 400 passkey_challenge_invalid: the challenge is unknown, expired ' +
          'or was answered already; 401 passkey_unknown: no account has this passkey (removed, or made elsewhere); 401 passkey_invalid: the answer does not verify ' +
          "(signature, origin, RP ID, user verification, a user handle that is not the passkey's account, or a signature counter not above the last one: a copy of the authenticator; " +
          "the passkey's owner finds it in the audit log as account.passkey_refused). Refused answers count against the password log-in's budget of the client (429 rate_limited beyond); one that verifies is given back.",
        body: PasskeySignIn,
        response: { 200: Account, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 429: ErrorResponse },
        errorCodes: ['passkey_challenge_invalid', 'passkey_unknown', 'passkey_invalid', 'account_disabled'],
        responseHeaders: {
          200: {
            'Set-Cookie': {
              type: 'string',
              description: `${sessionCookieName(app.config)}, ${deviceCookieName(app.config)} and, while two-factor is on, ${deviceCookieName(app.config, 'tollgate_device_2fa')}, as POST /api/v1/sessions sets them`,
            },
          },
        },
      },
    },
    async (request, reply) => {
      rejectCrossOriginForm(request, app.config)
      const attempt = await countClientAttempt(request.ip, 'login')
      const answer = { clientExtensionResults: {}, ...request.body.credential } as AuthenticationResponseJSON
      // Taken before anything else is checked: an answer is tried once, whatever it turns out to be.
      const outstanding = await takePasskeyChallenge(app, answer.response.clientDataJSON)
      if (outstanding?.purpose.purpose !== 'sign-in') throw new ApiError('passkey_challenge_invalid')
      const passkey = await passkeys.findByCredentialId(answer.id)
      if (passkey === undefined) throw new ApiError('passkey_unknown')
      /** Tells the owner of a known passkey that an answer of it was refused, and refuses it. */
      const refuse = async (reason: PasskeyRefusal, problem: string): Promise<never> => {
        await recordRepeatedAudit(app.database, request, { action: 'account.passkey_refused', accountId: passkey.accountId, details: { reason, passkeyId: passkey.id, passkey: passkey.name } }).catch(
          (error: unknown) => request.log.warn({ err: error }, 'could not record a refused passkey sign-in in the audit log'),
        )
        throw refused(problem)
      }
      // The account the authenticator says the passkey is of (the user handle, when it sends one)
      // must be the one it is registered to.
      const { userHandle } = answer.response
      if (userHandle !== undefined && userHandle.replace(/=+$/, '') !== userHandleOf(passkey.accountId)) return refuse('user_handle', "the user handle is not the passkey's account")
      const verdict = await verifyPasskeySignIn(relyingPartyOfRequest(app, request), answer, outstanding.challenge, passkey)
      if ('problem' in verdict) return refuse(verdict.reason ?? 'other', verdict.problem)

      const token = generateSessionToken()
      const expiresAt = new Date(Date.now() + SESSION_LIFETIME_MS)
      const origin = { userAgent: request.headers['user-agent'] ?? null, clientIp: request.ip }
      const opened = await app.database.transaction(async (transaction) => {
        // The account's row locked, as a password log-in locks it: its deletion, a password
        // change (which ends the other sessions) and two-factor turned on or off wait, or are seen.
        const twoFactor = await createTwoFactorRepository(transaction).lockTwoFactor(passkey.accountId)
        const account = await createAccountRepository(transaction).findWithPasswordById(passkey.accountId)
        if (twoFactor === undefined || account === undefined) throw new ApiError('passkey_unknown')
        // The account's own passkey proved it: as a right password, told that the operator disabled it.
        if (account.disabledAt !== null) throw new ApiError('account_disabled')
        const passkeysNow = createPasskeyRepository(transaction)
        if (!(await passkeysNow.recordUse(passkey.id, verdict.newCounter))) {
          // Removed since it was found: no account has it now, and nobody is to be told.
          if ((await passkeysNow.findById(passkey.accountId, passkey.id)) === undefined) throw new ApiError('passkey_unknown')
          // Another answer stored a counter at least this one's since the check (an answer of the
          // same counter, a copy's, or a later one that overtook it). Told to the owner as the
          // check's refusal is, once this transaction (which wrote nothing) is over.
          return { isCounterOvertaken: true as const }
        }
        // Named on the session: removing the passkey ends it.
        const id = await createSessionRepository(transaction).create(account, hashToken(token), expiresAt, origin, passkey.id)
        if (id === undefined) throw new Error('a session could not be opened for an account locked in its transaction')
        const actor = { ...auditActorOf(request), type: 'session' as const, id, name: account.email }
        await recordAudit(transaction, request, { action: 'account.logged_in', accountId: account.id, actor, details: { passkeyId: passkey.id, passkey: passkey.name } })
        return { isCounterOvertaken: false as const, account, secondFactorSince: twoFactor?.enabledAt }
      })
      if (opened.isCounterOvertaken) return refuse('counter', 'its signature counter has not gone up since its last sign-in, made while this one was checked')
      // An answer the passkey signed, which opened a session, is no guess: only refused ones spend the client's budget.
      await giveBack(request, attempt)
      const { account, secondFactorSince } = opened
      const emailKey = emailKeyOf(await app.accounts.foldEmail(account.email))
      setSessionCookie(reply, token, expiresAt, app.config)
      // The browser has logged in to the account, and passed its second factor: as after a password and a code.
      rememberDevice(reply, app.keyRing.macKeyFor('device'), passwordDevice(emailKey, account), app.config)
      if (secondFactorSince !== undefined) rememberDevice(reply, app.keyRing.macKeyFor('device'), secondFactorDevice(emailKey, secondFactorSince), app.config)
      return { id: account.id, email: account.email, createdAt: account.createdAt.toISOString() }
    },
  )
}

export default passkeySignInRoutes
