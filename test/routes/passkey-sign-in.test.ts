import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { credentialRateLimits } from '../../src/routes/v1/accounts/rate-limits.js'
import { asBrowser, createTestAccount, OWN_ORIGIN, randomClientAddress, sessionCookieOf, type TestAccount } from '../helpers/dashboard-client.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { userHandleOf } from '../../src/domain/accounts/passkeys.js'
import {
  addPasskey,
  createSoftwareAuthenticator,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  sendPasskeySignIn,
  signInWithPasskey,
  type SoftwareAuthenticator,
} from '../helpers/software-authenticator.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { enableTwoFactor } from '../helpers/two-factor.js'
import { holdTransactionsTogether } from '../helpers/transaction-pause.js'

describe.each(deployments)('logging in with a passkey on $name', ({ available, options }) => {
  let service: TestApp
  beforeAll(async () => {
    if (available) service = await buildTestApp(options)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  const errorCode = (response: { json: () => unknown }) => (response.json() as { error: { code: string } }).error.code
  /** An account with the authenticator's passkey. */
  async function accountWithPasskey(): Promise<{ account: TestAccount; authenticator: SoftwareAuthenticator }> {
    const account = await createTestAccount(service.app)
    const authenticator = createSoftwareAuthenticator()
    const added = await addPasskey(service.app, account, authenticator, { name: 'Laptop' })
    if (added.statusCode !== 201) throw new Error(`adding a passkey answered ${added.statusCode}: ${added.body}`)
    return { account, authenticator }
  }

  it.skipIf(!available)('opens the session a password log-in opens, records when the passkey was used, and tells the audit log', async () => {
    const { account, authenticator } = await accountWithPasskey()
    const options = await passkeySignInOptions(service.app)
    expect(options).toMatchObject({ rpId: 'localhost', userVerification: 'required' })
    expect(options).not.toHaveProperty('allowCredentials.0')

    const signedIn = await sendPasskeySignIn(service.app, authenticator.assert(options))
    expect(signedIn.statusCode, signedIn.body).toBe(200)
    expect(signedIn.json()).toEqual({ id: account.id, email: account.email, createdAt: expect.any(String) })
    const session = { cookie: sessionCookieOf(signedIn.headers['set-cookie']) }
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/me', headers: asBrowser(session) })).json()).toMatchObject({ email: account.email })

    const [passkey] = (await service.app.inject({ method: 'GET', url: '/api/v1/me/passkeys', headers: asBrowser(session) })).json<{ items: { lastUsedAt: string | null }[] }>().items
    expect(Date.now() - Date.parse(passkey?.lastUsedAt ?? '')).toBeLessThan(60_000)
    const log = (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: asBrowser(session) })).json<{ items: { action: string; details: Record<string, unknown> }[] }>()
    expect(log.items[0]).toMatchObject({ action: 'account.logged_in', details: { passkey: 'Laptop' } })
  })

  it.skipIf(!available)('counts as the second factor: an account with two-factor on is not asked for a code', async () => {
    const { account, authenticator } = await accountWithPasskey()
    await enableTwoFactor(service.app, account)
    const signedIn = await signInWithPasskey(service.app, authenticator)
    expect(signedIn.statusCode, signedIn.body).toBe(200)
    expect([signedIn.headers['set-cookie']].flat().some((cookie) => /^tollgate_device_2fa=/.test(cookie ?? ''))).toBe(true)
  })

  it.skipIf(!available)("refuses the account's own passkey once the operator disabled the account (npm run account -- disable), and opens no session", async () => {
    const { account, authenticator } = await accountWithPasskey()
    // As the script disables it: the flag, in the server's database.
    await service.app.database.query('UPDATE accounts SET disabled_at = now() WHERE id = $1', [account.id])
    const refused = await signInWithPasskey(service.app, authenticator)
    expect([refused.statusCode, errorCode(refused)]).toEqual([403, 'account_disabled'])
    expect(refused.headers['set-cookie']).toBeUndefined()
    await service.app.database.query('UPDATE accounts SET disabled_at = NULL WHERE id = $1', [account.id])
    expect((await signInWithPasskey(service.app, authenticator)).statusCode).toBe(200)
  })

  it.skipIf(!available)('refuses a signature counter that does not go up, a copy of the authenticator', async () => {
    const { authenticator } = await accountWithPasskey()
    expect((await signInWithPasskey(service.app, authenticator, { counter: 5 })).statusCode).toBe(200)
    for (const counter of [3, 5, 0]) {
      const refused = await signInWithPasskey(service.app, authenticator, { counter })
      expect(refused.statusCode, `counter ${counter}`).toBe(401)
      expect(errorCode(refused)).toBe('passkey_invalid')
      expect(refused.headers['set-cookie']).toBeUndefined()
    }
    expect((await signInWithPasskey(service.app, authenticator, { counter: 6 })).statusCode).toBe(200)
  })

  it.skipIf(!available)('signs in again and again with an authenticator whose counter is always 0 (one that keeps none)', async () => {
    const { account, authenticator } = await accountWithPasskey()
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const signedIn = await signInWithPasskey(service.app, authenticator, { counter: 0 })
      expect(signedIn.statusCode, `attempt ${attempt}: ${signedIn.body}`).toBe(200)
      expect(signedIn.json()).toMatchObject({ id: account.id })
    }
  })

  it.skipIf(!available)("requires a user handle, when the answer carries one, to be the passkey's account's", async () => {
    const { account, authenticator } = await accountWithPasskey()
    const other = await createTestAccount(service.app)
    const mismatched = await signInWithPasskey(service.app, authenticator, { userHandle: userHandleOf(other.id) })
    expect(mismatched.statusCode).toBe(401)
    expect(errorCode(mismatched)).toBe('passkey_invalid')
    expect(mismatched.headers['set-cookie']).toBeUndefined()
    expect((await signInWithPasskey(service.app, authenticator, { userHandle: 'Zm9yZ2Vk' })).statusCode).toBe(401)
    const own = await signInWithPasskey(service.app, authenticator, { userHandle: userHandleOf(account.id) })
    expect(own.statusCode, own.body).toBe(200)
    expect(own.json()).toMatchObject({ id: account.id })
  })

  it.skipIf(!available)("tells the owner's audit log of refused answers of their passkey, one event an hour with the reason", async () => {
    const { account, authenticator } = await accountWithPasskey()
    expect((await signInWithPasskey(service.app, authenticator, { counter: 7 })).statusCode).toBe(200)
    expect((await signInWithPasskey(service.app, authenticator, { counter: 7 })).statusCode).toBe(401)
    expect((await signInWithPasskey(service.app, authenticator, { forgeSignature: true })).statusCode).toBe(401)
    const [passkey] = (await service.app.inject({ method: 'GET', url: '/api/v1/me/passkeys', headers: asBrowser(account) })).json<{ items: { id: string }[] }>().items
    const log = (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: asBrowser(account) })).json<{ items: { action: string; details: Record<string, unknown> }[] }>()
    const refusals = log.items.filter(({ action }) => action === 'account.passkey_refused')
    expect(refusals).toHaveLength(1)
    expect(refusals[0]?.details).toMatchObject({ reason: 'counter', passkeyId: passkey?.id, passkey: 'Laptop', count: 2 })
    // The forged signature is listed beside the counter, each reason once.
    expect(refusals[0]?.details.variants).toEqual([
      { reason: 'counter', passkeyId: passkey?.id, passkey: 'Laptop' },
      { reason: 'signature', passkeyId: passkey?.id, passkey: 'Laptop' },
    ])
    // An unknown passkey has no owner to tell; another account's log has nothing.
    const other = await createTestAccount(service.app)
    expect((await signInWithPasskey(service.app, createSoftwareAuthenticator())).statusCode).toBe(401)
    const othersLog = (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: asBrowser(other) })).json<{ items: { action: string }[] }>()
    expect(othersLog.items.some(({ action }) => action === 'account.passkey_refused')).toBe(false)
  })

  const refusalsOf = async (account: TestAccount) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: asBrowser(account) }))
      .json<{ items: { action: string; details: Record<string, unknown> }[] }>()
      .items.filter(({ action }) => action === 'account.passkey_refused')

  it.skipIf(!available)("logs in once of two answers of one counter checked at once (a copy racing the authenticator), and tells the owner's audit log", async () => {
    const { account, authenticator } = await accountWithPasskey()
    const answers = [authenticator.assert(await passkeySignInOptions(service.app), { counter: 1 }), authenticator.assert(await passkeySignInOptions(service.app), { counter: 1 })]
    // Both answers pass the check of the counter (0 stored) before either stores theirs.
    const held = holdTransactionsTogether(service.app, 2)
    let outcomes: Awaited<ReturnType<typeof sendPasskeySignIn>>[]
    try {
      outcomes = await Promise.all(answers.map((answer) => sendPasskeySignIn(service.app, answer)))
      // Both were checked and reached their transaction: the race was run, not two log-ins in turn.
      await held.released
    } finally {
      held.restore()
    }

    expect(outcomes.map((outcome) => outcome.statusCode).sort()).toEqual([200, 401])
    const refused = outcomes.find((outcome) => outcome.statusCode === 401)!
    expect(errorCode(refused)).toBe('passkey_invalid')
    expect(refused.headers['set-cookie']).toBeUndefined()
    const sessions = (await service.app.inject({ method: 'GET', url: '/api/v1/sessions', headers: asBrowser(account) })).json<{ items: unknown[] }>().items
    expect(sessions).toHaveLength(2) // the test account's own, and the one answer's
    const [passkey] = (await service.app.inject({ method: 'GET', url: '/api/v1/me/passkeys', headers: asBrowser(account) })).json<{ items: { id: string }[] }>().items
    expect((await refusalsOf(account)).map(({ details }) => details)).toEqual([expect.objectContaining({ reason: 'counter', passkeyId: passkey?.id, passkey: 'Laptop', count: 1 })])
  })

  it.skipIf(!available)('files a forged answer with a low counter under its signature, and only an answer the passkey signed under its counter', async () => {
    // Someone who knows the credential id but has no authenticator: any counter, another key's signature.
    const forged = await accountWithPasskey()
    expect((await signInWithPasskey(service.app, forged.authenticator, { counter: 7 })).statusCode).toBe(200)
    const forgery = await signInWithPasskey(service.app, forged.authenticator, { counter: 3, forgeSignature: true })
    expect(forgery.statusCode).toBe(401)
    expect(errorCode(forgery)).toBe('passkey_invalid')
    expect((await refusalsOf(forged.account)).map(({ details }) => details.reason)).toEqual(['signature'])

    // The authenticator's own signature on a counter not above the last: a copy of it.
    const copied = await accountWithPasskey()
    expect((await signInWithPasskey(service.app, copied.authenticator, { counter: 7 })).statusCode).toBe(200)
    const copy = await signInWithPasskey(service.app, copied.authenticator, { counter: 7 })
    expect(copy.statusCode).toBe(401)
    expect(errorCode(copy)).toBe('passkey_invalid')
    expect((await refusalsOf(copied.account)).map(({ details }) => details.reason)).toEqual(['counter'])
  })

  it.skipIf(!available)('answers passkey_unknown to an answer of a passkey removed while it was checked, with nobody to tell', async () => {
    const { account, authenticator } = await accountWithPasskey()
    const [passkey] = (await service.app.inject({ method: 'GET', url: '/api/v1/me/passkeys', headers: asBrowser(account) })).json<{ items: { id: string }[] }>().items
    const answer = authenticator.assert(await passkeySignInOptions(service.app))
    // Its owner removes it after the answer was checked, before the session is opened.
    const transaction = service.app.database.transaction.bind(service.app.database)
    const spy = vi.spyOn(service.app.database, 'transaction').mockImplementationOnce(async (work, options) => {
      const removed = await service.app.inject({ method: 'DELETE', url: `/api/v1/me/passkeys/${passkey?.id}`, headers: asBrowser(account), payload: { password: account.password }, remoteAddress: randomClientAddress() })
      expect(removed.statusCode, removed.body).toBe(204)
      return transaction(work, options)
    })
    try {
      const refused = await sendPasskeySignIn(service.app, answer)
      expect(refused.statusCode, refused.body).toBe(401)
      expect(errorCode(refused)).toBe('passkey_unknown')
    } finally {
      spy.mockRestore()
    }
    expect(await refusalsOf(account)).toEqual([])
  })

  it.skipIf(!available)('refuses a registration challenge at sign-in, and a sign-in challenge at registration', async () => {
    const { account, authenticator } = await accountWithPasskey()
    const registration = await passkeyRegistrationOptions(service.app, account)
    const crossed = await sendPasskeySignIn(service.app, authenticator.assert({ challenge: registration.challenge, rpId: registration.rp.id }))
    expect(crossed.statusCode).toBe(400)
    expect(errorCode(crossed)).toBe('passkey_challenge_invalid')

    const signIn = await passkeySignInOptions(service.app)
    const registered = await service.app.inject({
      method: 'POST',
      url: '/api/v1/me/passkeys',
      headers: asBrowser(account),
      payload: { name: 'Crossed', password: account.password, credential: createSoftwareAuthenticator().attest({ challenge: signIn.challenge, rp: { id: signIn.rpId } }) },
      remoteAddress: randomClientAddress(),
    })
    expect(registered.statusCode).toBe(400)
    expect(registered.json<{ error: { details: { field: string }[] } }>().error.details).toEqual([expect.objectContaining({ field: 'credential' })])
    // The sign-in challenge was not spent by the registration's look: it still signs in.
    expect((await sendPasskeySignIn(service.app, authenticator.assert(signIn))).statusCode).toBe(200)
  })

  it.skipIf(!available)('takes a challenge once: the same answer sent again, or twice at once, logs in once', async () => {
    const { authenticator } = await accountWithPasskey()
    const answer = authenticator.assert(await passkeySignInOptions(service.app))
    expect((await sendPasskeySignIn(service.app, answer)).statusCode).toBe(200)
    const replayed = await sendPasskeySignIn(service.app, answer)
    expect(replayed.statusCode).toBe(400)
    expect(errorCode(replayed)).toBe('passkey_challenge_invalid')

    const raced = authenticator.assert(await passkeySignInOptions(service.app))
    const outcomes = await Promise.all([sendPasskeySignIn(service.app, raced), sendPasskeySignIn(service.app, raced)])
    expect(outcomes.map((outcome) => outcome.statusCode).sort()).toEqual([200, 400])
  })

  it.skipIf(!available)('refuses a challenge it did not issue, an answer for another origin or RP ID, a forged signature and no user verification', async () => {
    const { authenticator } = await accountWithPasskey()
    const unissued = await sendPasskeySignIn(service.app, authenticator.assert({ challenge: 'bm90LWlzc3VlZC1oZXJl', rpId: 'localhost' }))
    expect(unissued.statusCode).toBe(400)
    expect(errorCode(unissued)).toBe('passkey_challenge_invalid')

    for (const overrides of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { forgeSignature: true }, { userVerified: false }]) {
      const refused = await signInWithPasskey(service.app, authenticator, overrides)
      expect(refused.statusCode, JSON.stringify(overrides)).toBe(401)
      expect(errorCode(refused)).toBe('passkey_invalid')
      expect(refused.headers['set-cookie']).toBeUndefined()
    }
    // The refusals spent no counter: the authenticator's next answer still logs in.
    expect((await signInWithPasskey(service.app, authenticator)).statusCode).toBe(200)
  })

  it.skipIf(!available)('answers an unknown passkey with passkey_unknown, and a malformed answer with a 4xx, never a 500', async () => {
    const unknown = await signInWithPasskey(service.app, createSoftwareAuthenticator())
    expect(unknown.statusCode).toBe(401)
    expect(errorCode(unknown)).toBe('passkey_unknown')

    const { authenticator } = await accountWithPasskey()
    const options = await passkeySignInOptions(service.app)
    const answer = authenticator.assert(options)
    const broken = await sendPasskeySignIn(service.app, { ...answer, response: { ...answer.response, authenticatorData: 'AAAA', signature: 'AAAA' } })
    expect(broken.statusCode).toBe(401)
    expect(errorCode(broken)).toBe('passkey_invalid')
    for (const credential of [{}, { ...answer, type: 'password' }, { ...answer, response: { ...answer.response, clientDataJSON: 'not base64url!' } }]) {
      const invalid = await sendPasskeySignIn(service.app, credential)
      expect(invalid.statusCode).toBe(400)
      expect(errorCode(invalid)).toBe('validation_error')
    }
    const unreadable = await sendPasskeySignIn(service.app, { ...answer, response: { ...answer.response, clientDataJSON: 'bm90IGpzb24' } })
    expect(unreadable.statusCode).toBe(400)
    expect(errorCode(unreadable)).toBe('passkey_challenge_invalid')
  })

  it.skipIf(!available)("gives a verified answer back to the client's log-in budget: more passkey log-ins from one address than it allows wrong ones", { timeout: 60_000 }, async () => {
    const { limit, windowMs } = credentialRateLimits.logInPerIp
    await startWithinOneWindow(windowMs, 30_000)
    const client = randomClientAddress()
    const { authenticator } = await accountWithPasskey()
    for (let attempt = 0; attempt <= limit; attempt += 1) {
      // The options from addresses of their own: they have a budget of their own.
      const signedIn = await sendPasskeySignIn(service.app, authenticator.assert(await passkeySignInOptions(service.app)), client)
      expect(signedIn.statusCode, `log-in ${attempt + 1}: ${signedIn.body}`).toBe(200)
    }
    // So a password log-in from that address is not refused either.
    const password = await service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: 'a@example.com', password: 'x' }, remoteAddress: client, headers: { origin: OWN_ORIGIN } })
    expect(password.json().error.code).toBe('invalid_credentials')
  })

  it.skipIf(!available)("refuses a page of another origin (login CSRF) and counts log-ins against the client's budget of password log-ins", async () => {
    const crossSite = await service.app.inject({ method: 'POST', url: '/api/v1/sessions/passkey/options', headers: { origin: 'https://evil.example' }, payload: {} })
    expect(crossSite.statusCode).toBe(403)
    expect(errorCode(crossSite)).toBe('csrf_rejected')

    const { limit, windowMs } = credentialRateLimits.logInPerIp
    await startWithinOneWindow(windowMs)
    const client = randomClientAddress()
    const { authenticator } = await accountWithPasskey()
    const answer = authenticator.assert(await passkeySignInOptions(service.app))
    for (let attempt = 0; attempt < limit; attempt += 1) {
      expect((await sendPasskeySignIn(service.app, { ...answer, response: { ...answer.response, clientDataJSON: 'bm90IGpzb24' } }, client)).statusCode).toBe(400)
    }
    const limited = await sendPasskeySignIn(service.app, answer, client)
    expect(limited.statusCode).toBe(429)
    expect(errorCode(limited)).toBe('rate_limited')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    // So does a password log-in from that client.
    const password = await service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: 'a@example.com', password: 'x' }, remoteAddress: client, headers: { origin: OWN_ORIGIN } })
    expect(password.statusCode).toBe(429)
  })
})
