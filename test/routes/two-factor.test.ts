import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newTotpSecret, sealSetup, sealTotpSecret } from '../../src/domain/accounts/two-factor.js'
import { credentialRateLimits } from '../../src/routes/v1/accounts/rate-limits.js'
import { createTwoFactorRepository } from '../../src/storage/sql/two-factor-repository.js'
import { asBrowser, asScript, createTestAccount, randomClientAddress, sessionCookieOf, type TestAccount } from '../helpers/dashboard-client.js'
import { requestWhileHoldingAccount } from '../helpers/account-row-race.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { authenticatorCode, enableTwoFactor } from '../helpers/two-factor.js'

describe.each(deployments)('two-factor authentication on $name', ({ available, options }) => {
  let service: TestApp
  beforeAll(async () => {
    if (available) service = await buildTestApp(options)
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  const logIn = (account: Pick<TestAccount, 'email' | 'password'>, code?: string, remoteAddress = randomClientAddress()) =>
    service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email: account.email, password: account.password, code }, remoteAddress })
  const status = async (account: Pick<TestAccount, 'cookie'>) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/me/two-factor', headers: asBrowser(account) })).json<{ enabled: boolean; enabledAt: string | null; recoveryCodesLeft: number }>()
  const turnOff = (account: Pick<TestAccount, 'cookie'>, payload: object) =>
    service.app.inject({ method: 'DELETE', url: '/api/v1/me/two-factor', headers: asBrowser(account), payload })
  const newCodes = (account: Pick<TestAccount, 'cookie'>, payload: object) =>
    service.app.inject({ method: 'POST', url: '/api/v1/me/two-factor/recovery-codes', headers: asBrowser(account), payload })
  // From an address of their own: the password's checks count against the client's budget.
  const changePassword = (account: Pick<TestAccount, 'cookie'>, payload: object, remoteAddress = randomClientAddress()) =>
    service.app.inject({ method: 'PUT', url: '/api/v1/me/password', headers: asBrowser(account), payload, remoteAddress })
  const deleteAccount = (account: Pick<TestAccount, 'cookie'>, payload: object) =>
    service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: asBrowser(account), payload, remoteAddress: randomClientAddress() })
  const auditActions = async (account: TestAccount) =>
    (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: asBrowser(account) }))
      .json<{ items: { action: string; details: Record<string, unknown> }[] }>()
      .items.map(({ action, details }) => ({ action, details }))

  it.skipIf(!available)('asks a log-in for the app\'s code once it is on; a right code logs in once, a wrong or replayed one does not', async () => {
    const account = await createTestAccount(service.app)
    expect(await status(account)).toEqual({ enabled: false, enabledAt: null, recoveryCodesLeft: 0 })

    const { secret, recoveryCodes, usedCode } = await enableTwoFactor(service.app, account)
    expect(recoveryCodes).toHaveLength(10)
    expect(new Set(recoveryCodes).size).toBe(10)
    for (const code of recoveryCodes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$/)
    const enabled = await status(account)
    expect(enabled).toMatchObject({ enabled: true, recoveryCodesLeft: 10 })
    expect(Date.now() - Date.parse(enabled.enabledAt ?? '')).toBeLessThan(60_000)
    // The session that turned it on stays.
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/me', headers: asBrowser(account) })).statusCode).toBe(200)

    const withoutCode = await logIn(account)
    expect(withoutCode.statusCode).toBe(401)
    expect(withoutCode.json().error.code).toBe('two_factor_required')
    expect(withoutCode.headers['set-cookie']).toBeUndefined()
    // The password comes first: a wrong one with a right code is a wrong password.
    const wrongPassword = await logIn({ email: account.email, password: 'not the password' }, authenticatorCode(secret, 1))
    expect(wrongPassword.json().error.code).toBe('invalid_credentials')
    const wrongCode = await logIn(account, authenticatorCode(secret, 1) === '000000' ? '111111' : '000000')
    expect(wrongCode.statusCode).toBe(401)
    expect(wrongCode.json().error.code).toBe('two_factor_invalid')
    expect(wrongCode.headers['set-cookie']).toBeUndefined()

    // The code that turned it on was taken; the next step's logs in, once.
    expect((await logIn(account, usedCode)).json().error.code).toBe('two_factor_invalid')
    const next = authenticatorCode(secret, 1)
    const loggedIn = await logIn(account, next)
    expect(loggedIn.statusCode, loggedIn.body).toBe(200)
    const me = await service.app.inject({ method: 'GET', url: '/api/v1/me', headers: { cookie: sessionCookieOf(loggedIn.headers['set-cookie']) } })
    expect(me.json()).toMatchObject({ email: account.email })
    expect((await logIn(account, next)).json().error.code).toBe('two_factor_invalid')
    // Nor does a code from outside the steps around now.
    expect((await logIn(account, authenticatorCode(secret, 3))).json().error.code).toBe('two_factor_invalid')
  })

  it.skipIf(!available)('takes each recovery code once, in any letter case and spacing, and counts what is left', async () => {
    // The wrong codes below are counted in one event per UTC hour.
    await startWithinOneWindow(3_600_000)
    const account = await createTestAccount(service.app)
    const { recoveryCodes } = await enableTwoFactor(service.app, account)
    const [first = '', second = ''] = recoveryCodes
    expect((await logIn(account, first)).statusCode).toBe(200)
    expect((await logIn(account, first)).json().error.code).toBe('two_factor_invalid')
    const typed = ` ${second.toUpperCase().replace(/-/g, ' ')} `
    expect((await logIn(account, typed)).statusCode).toBe(200)
    expect(await status(account)).toMatchObject({ enabled: true, recoveryCodesLeft: 8 })
    // Another account's code is no code of this one.
    const other = await createTestAccount(service.app)
    const othersCodes = await enableTwoFactor(service.app, other)
    expect((await logIn(account, othersCodes.recoveryCodes[0])).json().error.code).toBe('two_factor_invalid')

    const actions = await auditActions(account)
    expect(actions.filter((event) => event.action === 'account.recovery_code_used').map((event) => event.details)).toEqual([
      { recoveryCodesLeft: 8 },
      { recoveryCodesLeft: 9 },
    ])
    expect(actions.filter((event) => event.action === 'account.two_factor_failed')).toEqual([
      { action: 'account.two_factor_failed', details: expect.objectContaining({ count: 2 }) as unknown },
    ])
    expect(actions.some((event) => event.action === 'account.two_factor_enabled')).toBe(true)
  })

  it.skipIf(!available)('of two log-ins with the same code at once, exactly one gets a session', async () => {
    const account = await createTestAccount(service.app)
    const { secret, recoveryCodes } = await enableTwoFactor(service.app, account)
    for (const code of [authenticatorCode(secret, 1), recoveryCodes[0]]) {
      const answers = await Promise.all(Array.from({ length: 4 }, () => logIn(account, code)))
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 401, 401, 401])
    }
  })

  it.skipIf(!available || options.database !== 'postgres')('asks for the code of a log-in that found two-factor off just before it was turned on', async () => {
    const account = await createTestAccount(service.app)
    const answer = await requestWhileHoldingAccount(
      service.app,
      { accountId: account.id, lock: 'FOR NO KEY UPDATE', waitingStatement: '%FROM accounts WHERE id = $1 FOR NO KEY UPDATE%' },
      () => logIn(account),
      async (enabling) => {
        const sealed = sealTotpSecret(service.app.keyRing.keyFor('two-factor'), account.id, newTotpSecret())
        expect(await createTwoFactorRepository(enabling).enable(account.id, sealed, 0, [])).toBeInstanceOf(Date)
      },
    )
    expect(answer.statusCode, answer.body).toBe(401)
    expect(answer.json().error.code).toBe('two_factor_required')
  })

  it.skipIf(!available)('is turned on only with a setup of this account, its current code and the password; each wrong one is named and nothing changes', async () => {
    const account = await createTestAccount(service.app)
    const other = await createTestAccount(service.app)
    const setUp = async (who: TestAccount) =>
      (await service.app.inject({ method: 'POST', url: '/api/v1/me/two-factor/setup', headers: asBrowser(who), payload: {} })).json<{
        secret: string
        otpauthUri: string
        setupToken: string
      }>()
    const enable = (payload: object) => service.app.inject({ method: 'POST', url: '/api/v1/me/two-factor', headers: asBrowser(account), payload })

    const setup = await setUp(account)
    expect(setup.secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(setup.otpauthUri).toBe(
      `otpauth://totp/Tollgate:${encodeURIComponent(account.email)}?issuer=Tollgate&secret=${setup.secret}&algorithm=SHA1&digits=6&period=30`,
    )
    const wrong = await enable({ setupToken: setup.setupToken, code: '123456' === authenticatorCode(setup.secret) ? '654321' : '123456', password: 'not it' })
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json().error.details).toEqual([
      { field: 'password', message: 'is not your current password' },
      { field: 'code', message: "is not the app's current code: check that the phone's clock is right" },
    ])
    const othersSetup = await setUp(other)
    const foreign = await enable({ setupToken: othersSetup.setupToken, code: authenticatorCode(othersSetup.secret), password: account.password })
    expect(foreign.json().error.details).toEqual([{ field: 'setupToken', message: 'is not a setup of this account: start the setup again' }])
    const changed = await enable({ setupToken: `${setup.setupToken.slice(0, -2)}AA`, code: authenticatorCode(setup.secret), password: account.password })
    expect(changed.json().error.details).toEqual([{ field: 'setupToken', message: 'is not a setup of this account: start the setup again' }])
    expect(await status(account)).toMatchObject({ enabled: false })
    expect((await logIn(account)).statusCode).toBe(200)

    const enabled = await enable({ setupToken: setup.setupToken, code: authenticatorCode(setup.secret), password: account.password })
    expect(enabled.statusCode, enabled.body).toBe(200)
    // On already: another setup, or the same one again, is a conflict.
    expect((await service.app.inject({ method: 'POST', url: '/api/v1/me/two-factor/setup', headers: asBrowser(account), payload: {} })).statusCode).toBe(409)
    const again = await enable({ setupToken: setup.setupToken, code: authenticatorCode(setup.secret, 1), password: account.password })
    expect(again.statusCode).toBe(409)
    expect(again.json().error.code).toBe('conflict')

    // The database keeps the secret sealed, and the recovery codes as digests only.
    const [row] = await service.app.database.query<{ totp_secret_sealed: string }>('SELECT totp_secret_sealed FROM accounts WHERE id = $1', [account.id])
    expect(row?.totp_secret_sealed).toMatch(/^v1\./)
    expect(row?.totp_secret_sealed).not.toContain(setup.secret)
    const hashes = await service.app.database.query<{ code_hash: string }>('SELECT code_hash FROM account_recovery_codes WHERE account_id = $1', [account.id])
    expect(hashes).toHaveLength(10)
    const recoveryCodes = enabled.json<{ recoveryCodes: string[] }>().recoveryCodes
    for (const { code_hash: hash } of hashes) for (const code of recoveryCodes) expect(hash).not.toContain(code.replace(/-/g, ''))
  })

  it.skipIf(!available)('refuses a setup token past its 15 minutes', async () => {
    const account = await createTestAccount(service.app)
    const setup = (await service.app.inject({ method: 'POST', url: '/api/v1/me/two-factor/setup', headers: asBrowser(account), payload: {} })).json<{
      secret: string
      setupToken: string
    }>()
    const expired = sealSetup(service.app.keyRing.keyFor('two-factor'), account.id, setup.secret, Date.now() - 16 * 60_000)
    const answer = await service.app.inject({
      method: 'POST',
      url: '/api/v1/me/two-factor',
      headers: asBrowser(account),
      payload: { setupToken: expired, code: authenticatorCode(setup.secret), password: account.password },
    })
    expect(answer.json().error.details).toEqual([{ field: 'setupToken', message: 'has expired: start the setup again' }])
  })

  it.skipIf(!available)('is turned off with the password and a code; a wrong one of either changes nothing', async () => {
    const account = await createTestAccount(service.app)
    const { secret, recoveryCodes } = await enableTwoFactor(service.app, account)
    const wrongPassword = await turnOff(account, { password: 'not it', code: authenticatorCode(secret, 1) })
    expect(wrongPassword.json().error.details).toEqual([{ field: 'password', message: 'is not your current password' }])
    const wrongCode = await turnOff(account, { password: account.password, code: 'abcd-efgh-jkmn' })
    expect(wrongCode.statusCode).toBe(400)
    expect(wrongCode.json().error.details).toEqual([{ field: 'code', message: "is not the authenticator app's current code, nor an unused recovery code" }])
    expect(await status(account)).toMatchObject({ enabled: true, recoveryCodesLeft: 10 })

    expect((await turnOff(account, { password: account.password, code: recoveryCodes[0] })).statusCode).toBe(204)
    expect(await status(account)).toEqual({ enabled: false, enabledAt: null, recoveryCodesLeft: 0 })
    expect((await logIn(account)).statusCode).toBe(200)
    expect((await turnOff(account, { password: account.password, code: authenticatorCode(secret, 1) })).statusCode).toBe(409)
    // The recovery codes went with it.
    expect(await service.app.database.query('SELECT 1 FROM account_recovery_codes WHERE account_id = $1', [account.id])).toHaveLength(0)
    expect((await auditActions(account)).map((event) => event.action).slice(0, 2)).toEqual(['account.logged_in', 'account.two_factor_disabled'])
  })

  it.skipIf(!available)('makes new recovery codes with the password and a code; the old ones stop working', async () => {
    const account = await createTestAccount(service.app)
    const { secret, recoveryCodes } = await enableTwoFactor(service.app, account)
    expect((await logIn(account, recoveryCodes[0])).statusCode).toBe(200)
    const renewed = await newCodes(account, { password: account.password, code: authenticatorCode(secret, 1) })
    expect(renewed.statusCode, renewed.body).toBe(200)
    const fresh = renewed.json<{ recoveryCodes: string[] }>().recoveryCodes
    expect(fresh).toHaveLength(10)
    expect(fresh.some((code) => recoveryCodes.includes(code))).toBe(false)
    expect(await status(account)).toMatchObject({ recoveryCodesLeft: 10 })
    expect((await logIn(account, recoveryCodes[1])).json().error.code).toBe('two_factor_invalid')
    expect((await logIn(account, fresh[0])).statusCode).toBe(200)
    expect((await auditActions(account)).some((event) => event.action === 'account.recovery_codes_regenerated')).toBe(true)
  })

  it.skipIf(!available)('is the session\'s business only: an API key gets 403 everywhere, another origin 403 csrf_rejected', async () => {
    const account = await createTestAccount(service.app)
    const requests = [
      { method: 'GET', url: '/api/v1/me/two-factor' },
      { method: 'POST', url: '/api/v1/me/two-factor/setup', payload: {} },
      { method: 'POST', url: '/api/v1/me/two-factor', payload: { setupToken: 'x', code: '123456', password: account.password } },
      { method: 'DELETE', url: '/api/v1/me/two-factor', payload: { password: account.password, code: '123456' } },
      { method: 'POST', url: '/api/v1/me/two-factor/recovery-codes', payload: { password: account.password, code: '123456' } },
    ] as const
    for (const request of requests) {
      const answer = await service.app.inject({ ...request, headers: asScript(account) })
      expect(answer.statusCode, `${request.method} ${request.url}`).toBe(403)
      expect(answer.json().error.code).toBe('forbidden')
      expect((await service.app.inject({ ...request })).statusCode, `${request.method} ${request.url}`).toBe(401)
    }
    const crossSite = await service.app.inject({ method: 'POST', url: '/api/v1/me/two-factor/setup', headers: { cookie: account.cookie, origin: 'https://evil.example' }, payload: {} })
    expect(crossSite.json().error.code).toBe('csrf_rejected')
  })

  it.skipIf(!available)('limits codes to 5 per quarter hour from one client and 10 an hour from everywhere, even right ones then; a browser that passed the second factor is spared the second, one that only gave the password is not', { timeout: 60_000 }, async () => {
    // A quarter hour divides the hour: clear of the one's end, clear of the other's.
    await startWithinOneWindow(credentialRateLimits.secondFactorPerEmailAndIp.windowMs, 20_000)
    const account = await createTestAccount(service.app)
    // A browser that logged in before two-factor was on (the owner's, or someone's who had the password then).
    const before = await logIn(account)
    const passwordOnly = [before.headers['set-cookie']].flat().find((cookie) => cookie?.startsWith('tollgate_device='))?.split(';')[0] ?? ''
    expect(passwordOnly).not.toBe('')
    const { recoveryCodes, secondFactorDeviceCookie } = await enableTwoFactor(service.app, account)
    expect(secondFactorDeviceCookie).toMatch(/^tollgate_device_2fa=\d+\.[A-Za-z0-9_-]{43}$/)

    const client = randomClientAddress()
    for (let attempt = 0; attempt < 5; attempt++) expect((await logIn(account, '000000', client)).statusCode).toBe(401)
    const refused = await logIn(account, recoveryCodes[0], client)
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.code).toBe('rate_limited')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    // Without a code the password's answer is unchanged: the code's budget is not the password's.
    expect((await logIn(account, undefined, client)).json().error.code).toBe('two_factor_required')
    // From elsewhere, 5 more wrong codes spend the account's budget from everywhere.
    for (let attempt = 0; attempt < 5; attempt++) expect((await logIn(account, '000000')).statusCode).toBe(401)
    expect((await logIn(account, recoveryCodes[0])).statusCode).toBe(429)
    const withCookie = (cookie: string) =>
      service.app.inject({
        method: 'POST',
        url: '/api/v1/sessions',
        payload: { email: account.email, password: account.password, code: recoveryCodes[0] },
        headers: { cookie },
        remoteAddress: randomClientAddress(),
      })
    // A browser that gave only the password is not spared it; the one that gave a code is.
    expect((await withCookie(passwordOnly)).statusCode).toBe(429)
    const owners = await withCookie(secondFactorDeviceCookie)
    expect(owners.statusCode, owners.body).toBe(200)
    // The operator turning two-factor off and the owner on again: the old cookie no longer spares it.
    await service.app.database.query('UPDATE accounts SET totp_enabled_at = totp_enabled_at + interval \'1 second\' WHERE id = $1', [account.id])
    expect((await withCookie(secondFactorDeviceCookie)).statusCode).toBe(429)
  })

  it.skipIf(!available)('counts wrong codes only: the owner logs in with right codes more often than the budgets allow wrong ones, which stay limited', { timeout: 60_000 }, async () => {
    await startWithinOneWindow(credentialRateLimits.secondFactorPerEmailAndIp.windowMs, 30_000)
    const account = await createTestAccount(service.app)
    const { recoveryCodes } = await enableTwoFactor(service.app, account)
    const client = randomClientAddress()
    const { limit: perClient } = credentialRateLimits.secondFactorPerEmailAndIp
    const { limit: fromEverywhere } = credentialRateLimits.secondFactorPerEmail
    // As the dashboard logs in: the password, then the password and a code; no cookie, so no budget is spared.
    const rightCodes = recoveryCodes.slice(0, perClient + 3)
    for (const [index, code] of rightCodes.entries()) {
      expect((await logIn(account, undefined, client)).json().error.code).toBe('two_factor_required')
      const loggedIn = await logIn(account, code, client)
      expect(loggedIn.statusCode, `log-in ${index + 1}: ${loggedIn.body}`).toBe(200)
    }
    // The documented budgets still hold for wrong codes: 5 from this client, then 10 from everywhere.
    for (let attempt = 0; attempt < perClient; attempt++) expect((await logIn(account, '000000', client)).statusCode).toBe(401)
    const unused = recoveryCodes[rightCodes.length] ?? ''
    const refused = await logIn(account, unused, client)
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.message).toMatch(/^Too many wrong two-factor codes for this account from this address; retry in \d+ seconds\.$/)
    for (let attempt = perClient; attempt < fromEverywhere; attempt++) expect((await logIn(account, '000000')).statusCode).toBe(401)
    const everywhere = await logIn(account, unused)
    expect(everywhere.statusCode).toBe(429)
    expect(everywhere.json().error.message).toMatch(/^Too many wrong two-factor codes for this account from everywhere; retry in \d+ seconds\.$/)
    // Refused, the code was not used up.
    expect(await status(account)).toMatchObject({ recoveryCodesLeft: recoveryCodes.length - rightCodes.length })
  })

  it.skipIf(!available)('counts a right password sent with a wrong code against the client\'s log-in budget: one machine holding the passwords of many accounts guesses their codes within it', { timeout: 60_000 }, async () => {
    const { limit: perAddress, windowMs } = credentialRateLimits.logInPerIp
    const { limit: perAccount } = credentialRateLimits.secondFactorPerEmailAndIp
    await startWithinOneWindow(windowMs, 30_000)
    // More accounts than the client's budget needs at the code's budget of each: the code's budgets alone would allow more guesses.
    const accounts = await Promise.all(Array.from({ length: Math.ceil(perAddress / perAccount) + 1 }, async () => {
      const account = await createTestAccount(service.app)
      await enableTwoFactor(service.app, account)
      return account
    }))
    const client = randomClientAddress()
    for (let attempt = 0; attempt < perAddress; attempt++) {
      const account = accounts[attempt % accounts.length]!
      // The password's step, as the dashboard takes it first, is given back: nothing is left to guess then.
      expect((await logIn(account, undefined, client)).json().error.code).toBe('two_factor_required')
      const wrong = await logIn(account, '000000', client)
      expect(wrong.json().error.code, `guess ${attempt + 1}`).toBe('two_factor_invalid')
    }
    const refused = await logIn(accounts[0]!, '000000', client)
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.message).toMatch(/^Too many log-in attempts from this address; retry in \d+ seconds\.$/)
  })

  it.skipIf(!available)('limits the codes that turn two-factor off as the log-in\'s', { timeout: 60_000 }, async () => {
    await startWithinOneWindow(credentialRateLimits.secondFactorPerEmailAndIp.windowMs, 20_000)
    const account = await createTestAccount(service.app)
    const { recoveryCodes } = await enableTwoFactor(service.app, account)
    for (let attempt = 0; attempt < 5; attempt++) expect((await turnOff(account, { password: account.password, code: '000000' })).statusCode).toBe(400)
    const refused = await turnOff(account, { password: account.password, code: recoveryCodes[0] })
    expect(refused.statusCode).toBe(429)
    expect(await status(account)).toMatchObject({ enabled: true, recoveryCodesLeft: 10 })
  })

  it.skipIf(!available)('tells the owner of the right password given without a code from a browser that has not passed the second factor, not from one that has', async () => {
    await startWithinOneWindow(3_600_000)
    const account = await createTestAccount(service.app)
    const { secondFactorDeviceCookie } = await enableTwoFactor(service.app, account)
    const stranger = randomClientAddress()
    expect((await logIn(account, undefined, stranger)).statusCode).toBe(401)
    expect((await logIn(account, undefined, stranger)).statusCode).toBe(401)
    const owners = await service.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      payload: { email: account.email, password: account.password },
      headers: { cookie: secondFactorDeviceCookie },
      remoteAddress: randomClientAddress(),
    })
    expect(owners.json().error.code).toBe('two_factor_required')
    const asked = (await auditActions(account)).filter((event) => event.action === 'account.two_factor_asked')
    expect(asked).toEqual([{ action: 'account.two_factor_asked', details: expect.objectContaining({ count: 2, addresses: [stranger] }) as unknown }])
  })

  it.skipIf(!available)('asks a password change for a code too while it is on: a missing or wrong one is named and changes nothing, a right one works once', async () => {
    const account = await createTestAccount(service.app)
    const enabled = await enableTwoFactor(service.app, account)
    const { secret } = enabled
    const newPassword = 'a brand new passphrase'
    const missing = await changePassword(account, { currentPassword: account.password, newPassword })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error.details).toEqual([{ field: 'code', message: 'is required: two-factor authentication is on' }])
    // Every problem at once: the password's, the new one's and the code's.
    const allWrong = await changePassword(account, { currentPassword: 'not it', newPassword: 'short', code: ' ' })
    expect(allWrong.json<{ error: { details: { field: string }[] } }>().error.details.map((detail) => detail.field)).toEqual(['currentPassword', 'newPassword', 'code'])
    // The password comes first: a wrong one, or a new one refused, leaves a right code unused.
    const { recoveryCodes } = enabled
    expect((await changePassword(account, { currentPassword: 'not it', newPassword, code: recoveryCodes[0] })).json().error.details).toEqual([
      { field: 'currentPassword', message: 'is not your current password' },
    ])
    expect((await changePassword(account, { currentPassword: account.password, newPassword: 'short', code: recoveryCodes[0] })).statusCode).toBe(400)
    expect(await status(account)).toMatchObject({ recoveryCodesLeft: 10 })
    const wrongCode = await changePassword(account, { currentPassword: account.password, newPassword, code: 'abcd-efgh-jkmn' })
    expect(wrongCode.statusCode).toBe(400)
    expect(wrongCode.json().error.details).toEqual([{ field: 'code', message: "is not the authenticator app's current code, nor an unused recovery code" }])
    // Nothing changed: the old password still logs in (with a code), the new one does not.
    expect((await logIn({ email: account.email, password: newPassword }, authenticatorCode(secret, 1))).json().error.code).toBe('invalid_credentials')

    const code = authenticatorCode(secret, 1)
    const changed = await changePassword(account, { currentPassword: account.password, newPassword, code })
    expect(changed.statusCode, changed.body).toBe(204)
    expect((await logIn(account, code)).json().error.code).toBe('invalid_credentials')
    // The code was taken: it neither logs in nor changes the password again.
    expect((await logIn({ email: account.email, password: newPassword }, code)).json().error.code).toBe('two_factor_invalid')
    const again = await changePassword(account, { currentPassword: newPassword, newPassword: 'yet another passphrase', code })
    expect(again.json().error.details).toEqual([{ field: 'code', message: "is not the authenticator app's current code, nor an unused recovery code" }])
    // A recovery code does it too, used up; the owner sees the wrong codes, the recovery code and the change.
    expect((await changePassword(account, { currentPassword: newPassword, newPassword: 'yet another passphrase', code: recoveryCodes[0] })).statusCode).toBe(204)
    expect(await status(account)).toMatchObject({ recoveryCodesLeft: 9 })
    const events = await auditActions(account)
    // Three wrong codes: two at changes, one at the log-in above.
    expect(events.find((event) => event.action === 'account.two_factor_failed')?.details).toMatchObject({ count: 3 })
    expect(events.find((event) => event.action === 'account.recovery_code_used')?.details).toEqual({ recoveryCodesLeft: 9 })
    expect(events.filter((event) => event.action === 'account.password_changed')).toHaveLength(2)
  })

  it.skipIf(!available)('deletes the account only with a code too while it is on; a recovery code does it', async () => {
    const account = await createTestAccount(service.app)
    const { recoveryCodes } = await enableTwoFactor(service.app, account)
    expect((await deleteAccount(account, { password: account.password })).json().error.details).toEqual([
      { field: 'code', message: 'is required: two-factor authentication is on' },
    ])
    expect((await deleteAccount(account, { password: account.password, code: '000000' })).json().error.details).toEqual([
      { field: 'code', message: "is not the authenticator app's current code, nor an unused recovery code" },
    ])
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/me', headers: asBrowser(account) })).statusCode).toBe(200)
    const deleted = await deleteAccount(account, { password: account.password, code: recoveryCodes[0]?.toUpperCase() })
    expect(deleted.statusCode, deleted.body).toBe(204)
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/me', headers: asBrowser(account) })).statusCode).toBe(401)
    expect((await logIn(account, recoveryCodes[1])).json().error.code).toBe('invalid_credentials')
  })

  it.skipIf(!available)('asks no code of a password change or a deletion while it is off, and ignores one sent', async () => {
    const account = await createTestAccount(service.app)
    const changed = await changePassword(account, { currentPassword: account.password, newPassword: 'a brand new passphrase', code: '123456' })
    expect(changed.statusCode, changed.body).toBe(204)
    expect((await logIn({ email: account.email, password: 'a brand new passphrase' })).statusCode).toBe(200)
    expect((await deleteAccount(account, { password: 'a brand new passphrase', code: '' })).statusCode).toBe(204)
  })

  it.skipIf(!available)('counts the codes of a password change against the log-in\'s budgets', { timeout: 60_000 }, async () => {
    await startWithinOneWindow(credentialRateLimits.secondFactorPerEmailAndIp.windowMs, 20_000)
    const account = await createTestAccount(service.app)
    const { recoveryCodes } = await enableTwoFactor(service.app, account)
    const client = randomClientAddress()
    const attempt = (code: string | undefined) => changePassword(account, { currentPassword: account.password, newPassword: 'a brand new passphrase', code }, client)
    for (let index = 0; index < 5; index++) expect((await attempt('000000')).statusCode).toBe(400)
    const refused = await attempt(recoveryCodes[0])
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.code).toBe('rate_limited')
    expect(await status(account)).toMatchObject({ recoveryCodesLeft: 10 })
    // Refused, a right code was not used up: it still logs in.
    expect((await logIn(account, recoveryCodes[0])).statusCode).toBe(200)
  })

  it.skipIf(!available || options.database !== 'postgres')('refuses a password change that found two-factor off just before it was turned on, with a conflict, and changes nothing', async () => {
    const account = await createTestAccount(service.app)
    const answer = await requestWhileHoldingAccount(
      service.app,
      { accountId: account.id, lock: 'FOR NO KEY UPDATE', waitingStatement: '%FROM accounts WHERE id = $1 FOR NO KEY UPDATE%' },
      () => changePassword(account, { currentPassword: account.password, newPassword: 'a brand new passphrase' }),
      async (enabling) => {
        const sealed = sealTotpSecret(service.app.keyRing.keyFor('two-factor'), account.id, newTotpSecret())
        expect(await createTwoFactorRepository(enabling).enable(account.id, sealed, 0, [])).toBeInstanceOf(Date)
      },
    )
    expect(answer.statusCode, answer.body).toBe(409)
    expect(answer.json().error).toMatchObject({ code: 'conflict', details: [{ field: 'code' }] })
    expect((await logIn(account)).json().error.code).toBe('two_factor_required')
  })

  it.skipIf(!available)('counts the codes a session confirms changes with against its own budget, which the second factor\'s device cookie does not spare', { timeout: 60_000 }, async () => {
    await startWithinOneWindow(credentialRateLimits.secondFactorPerEmail.windowMs, 20_000)
    const account = await createTestAccount(service.app)
    const { recoveryCodes, secondFactorDeviceCookie } = await enableTwoFactor(service.app, account)
    // The session's cookie and the device's, copied together, from ever new addresses.
    const copied = { ...asBrowser(account), cookie: `${account.cookie}; ${secondFactorDeviceCookie}` }
    const attempt = (code: string | undefined) =>
      service.app.inject({ method: 'DELETE', url: '/api/v1/me', headers: copied, payload: { password: account.password, code }, remoteAddress: randomClientAddress() })
    for (let index = 0; index < 10; index++) expect((await attempt('000000')).statusCode).toBe(400)
    const refused = await attempt(recoveryCodes[0])
    expect(refused.statusCode).toBe(429)
    expect(await status(account)).toMatchObject({ enabled: true, recoveryCodesLeft: 10 })
    // The owner's log-in from that browser is still spared the account's budget: the session's is its own.
    const owners = await service.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      payload: { email: account.email, password: account.password, code: recoveryCodes[0] },
      headers: { cookie: secondFactorDeviceCookie },
      remoteAddress: randomClientAddress(),
    })
    expect(owners.statusCode, owners.body).toBe(200)
  })

  it.skipIf(!available || options.database !== 'postgres')('refuses a change checked just before the password was changed, or the session ended, elsewhere; the code stays unused', async () => {
    const account = await createTestAccount(service.app)
    const { recoveryCodes } = await enableTwoFactor(service.app, account)
    const [sessionId] = (await service.app.database.query<{ id: string }>('SELECT id FROM sessions WHERE account_id = $1', [account.id])).map((row) => row.id)
    // Held where the change locks the account's row (a deletion FOR UPDATE), after its password's check.
    const whileHolding = (lock: string, request: () => ReturnType<typeof changePassword>, meanwhile: Parameters<typeof requestWhileHoldingAccount>[3]) =>
      requestWhileHoldingAccount(service.app, { accountId: account.id, lock: 'FOR NO KEY UPDATE', waitingStatement: `%FROM accounts WHERE id = $1 ${lock}%` }, request, meanwhile)

    const afterPasswordChange = await whileHolding(
      'FOR NO KEY UPDATE',
      () => changePassword(account, { currentPassword: account.password, newPassword: 'a brand new passphrase', code: recoveryCodes[0] }),
      (holding) => holding.query("UPDATE accounts SET password_hash = password_hash || 'changed' WHERE id = $1", [account.id]),
    )
    expect(afterPasswordChange.statusCode, afterPasswordChange.body).toBe(400)
    expect(afterPasswordChange.json().error.details).toEqual([{ field: 'currentPassword', message: 'is not your current password' }])
    await service.app.database.query("UPDATE accounts SET password_hash = left(password_hash, -length('changed')) WHERE id = $1", [account.id])

    const afterSessionEnded = await whileHolding(
      'FOR UPDATE',
      () => deleteAccount(account, { password: account.password, code: recoveryCodes[0] }),
      (holding) => holding.query('DELETE FROM sessions WHERE id = $1', [sessionId]),
    )
    expect(afterSessionEnded.statusCode, afterSessionEnded.body).toBe(401)
    expect(await service.app.database.query('SELECT 1 FROM account_recovery_codes WHERE account_id = $1 AND used_at IS NULL', [account.id])).toHaveLength(10)
    expect((await logIn(account, recoveryCodes[0])).statusCode).toBe(200)
  })

  it.skipIf(!available || options.database !== 'postgres')('does not turn two-factor on for a session ended while it was checked', async () => {
    const account = await createTestAccount(service.app)
    const setup = await service.app.inject({ method: 'POST', url: '/api/v1/me/two-factor/setup', headers: asBrowser(account), payload: {} })
    const { secret, setupToken } = setup.json<{ secret: string; setupToken: string }>()
    const answer = await requestWhileHoldingAccount(
      service.app,
      { accountId: account.id, lock: 'FOR NO KEY UPDATE', waitingStatement: '%UPDATE accounts SET totp_secret_sealed%' },
      () => service.app.inject({ method: 'POST', url: '/api/v1/me/two-factor', headers: asBrowser(account), payload: { setupToken, code: authenticatorCode(secret), password: account.password }, remoteAddress: randomClientAddress() }),
      (holding) => holding.query('DELETE FROM sessions WHERE account_id = $1', [account.id]),
    )
    expect(answer.statusCode, answer.body).toBe(401)
    expect((await logIn(account)).statusCode).toBe(200)
  })

  it.skipIf(!available || options.database !== 'postgres')('of two deletions at once, each with its own recovery code, one deletes and the other is told the account is gone', async () => {
    for (let round = 0; round < 3; round += 1) {
      const account = await createTestAccount(service.app)
      const { recoveryCodes } = await enableTwoFactor(service.app, account)
      const answers = await Promise.all(recoveryCodes.slice(0, 2).map((code) => deleteAccount(account, { password: account.password, code })))
      expect(answers.map((answer) => answer.statusCode).sort(), answers.map((answer) => answer.body).join(' ')).toEqual([204, 401])
    }
  })

  it.skipIf(!available || options.database !== 'postgres')('turns off with one recovery code while new codes are made with the app\'s: one wins, the other is told, neither fails', async () => {
    const account = await createTestAccount(service.app)
    const { secret, recoveryCodes } = await enableTwoFactor(service.app, account)
    const [off, renewed] = await Promise.all([
      turnOff(account, { password: account.password, code: recoveryCodes[0] }),
      newCodes(account, { password: account.password, code: authenticatorCode(secret, 1) }),
    ])
    const outcome = [off.statusCode, renewed.statusCode]
    // Off first: nothing to renew (409). Renewed first: the recovery code was among the old ones (400).
    expect([[204, 409], [400, 200]], `${off.body} ${renewed.body}`).toContainEqual(outcome)
  })

})
