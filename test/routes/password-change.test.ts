import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../../src/domain/accounts/password.js'
import { asBrowser, asScript, createTestAccount, randomClientAddress, sessionCookieOf } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { credentialRateLimits } from '../../src/routes/v1/accounts/rate-limits.js'

describe('PUT /api/v1/me/password', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp()
  })
  afterAll(() => service.close())

  const change = (headers: Record<string, string>, payload: object) =>
    service.app.inject({ method: 'PUT', url: '/api/v1/me/password', headers, payload })
  const logIn = async (email: string, password: string) => {
    const response = await service.app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email, password }, remoteAddress: randomClientAddress() })
    return { status: response.statusCode, cookie: response.statusCode === 200 ? sessionCookieOf(response.headers['set-cookie']) : '' }
  }
  const me = async (headers: Record<string, string>) => (await service.app.inject({ method: 'GET', url: '/api/v1/me', headers })).statusCode

  it('changes the password: the new one logs in, the old one no longer does; other sessions end, this one and the API keys stay', async () => {
    const account = await createTestAccount(service.app)
    const otherDevice = await logIn(account.email, account.password)
    expect(await me({ cookie: otherDevice.cookie })).toBe(200)

    const response = await change(asBrowser(account), { currentPassword: account.password, newPassword: 'a new passphrase, longer' })
    expect(response.statusCode).toBe(204)

    expect((await logIn(account.email, account.password)).status).toBe(401)
    expect((await logIn(account.email, 'a new passphrase, longer')).status).toBe(200)
    expect(await me({ cookie: otherDevice.cookie })).toBe(401)
    expect(await me(asBrowser(account))).toBe(200)
    expect(await me(asScript(account))).toBe(200)
  })

  it('refuses a wrong current password and a short new one, naming each field, and changes nothing', async () => {
    const account = await createTestAccount(service.app)
    const response = await change(asBrowser(account), { currentPassword: 'not the password', newPassword: 'short' })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({
      code: 'validation_error',
      details: [
        { field: 'currentPassword', message: 'is not your current password' },
        { field: 'newPassword', message: 'must be at least 10 characters' },
      ],
    })
    expect((await logIn(account.email, account.password)).status).toBe(200)
  })

  it('refuses a common new password and one containing the account\'s address, naming newPassword; an old such password still logs in', async () => {
    const account = await createTestAccount(service.app)
    for (const [newPassword, message] of [
      ['password123', expect.stringMatching(/^is too common/)],
      [`${account.email} again`, 'must not contain your e-mail address or the part before its @'],
      ['0000000000', 'must not be one character repeated'],
    ] as const) {
      const response = await change(asBrowser(account), { currentPassword: account.password, newPassword })
      expect(response.statusCode, newPassword).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'newPassword', message }] })
    }
    expect((await logIn(account.email, account.password)).status).toBe(200)
    // A password chosen before the rule (set here as the operator's script once could) still logs in.
    await service.app.database.query('UPDATE accounts SET password_hash = $2 WHERE id = $1', [account.id, await hashPassword('password123')])
    expect((await logIn(account.email, 'password123')).status).toBe(200)
  })

  it('refuses a new password equal to the current one (400 password_unchanged on newPassword): no session ends, nothing is recorded', async () => {
    const account = await createTestAccount(service.app)
    const otherDevice = await logIn(account.email, account.password)
    const response = await change(asBrowser(account), { currentPassword: account.password, newPassword: account.password })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({
      code: 'password_unchanged',
      message: 'The new password is your current password: choose another one.',
      details: [{ field: 'newPassword', message: 'is your current password: choose another one' }],
    })
    expect(await me({ cookie: otherDevice.cookie })).toBe(200)
    const audit = (await service.app.inject({ method: 'GET', url: '/api/v1/audit-log?action=account.password_changed', headers: asBrowser(account) })).json()
    expect(audit.items).toEqual([])
    // A wrong current password is still that field's error, whatever the new one.
    const wrong = await change(asBrowser(account), { currentPassword: 'not the password', newPassword: 'not the password' })
    expect(wrong.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'currentPassword', message: 'is not your current password' }] })
  })

  it('is refused with an API key (403): a leaked key cannot take the account over', async () => {
    const account = await createTestAccount(service.app)
    const response = await change(asScript(account), { currentPassword: account.password, newPassword: 'taken over by a script' })
    expect(response.statusCode).toBe(403)
    expect(response.json().error.code).toBe('forbidden')
    expect((await logIn(account.email, account.password)).status).toBe(200)
  })

  it('is refused from another origin with the session cookie (403 csrf_rejected), and without credentials (401)', async () => {
    const account = await createTestAccount(service.app)
    const payload = { currentPassword: account.password, newPassword: 'changed by another site' }
    const crossSite = await change({ cookie: account.cookie, origin: 'https://evil.example' }, payload)
    expect(crossSite.statusCode).toBe(403)
    expect(crossSite.json().error.code).toBe('csrf_rejected')
    expect((await change({}, payload)).statusCode).toBe(401)
    expect((await logIn(account.email, account.password)).status).toBe(200)
  })

  it('counts wrong current passwords like log-ins: 429 with Retry-After after 10 in 10 minutes, even with the right one then', async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerEmailAndIp.windowMs)
    const account = await createTestAccount(service.app)
    for (let attempt = 0; attempt < 10; attempt++) {
      expect((await change(asBrowser(account), { currentPassword: `guess ${attempt}`, newPassword: 'a new passphrase' })).statusCode).toBe(400)
    }
    const refused = await change(asBrowser(account), { currentPassword: account.password, newPassword: 'a new passphrase' })
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error.code).toBe('rate_limited')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect((await logIn(account.email, account.password)).status).toBe(200)
  })

  it('counts a client\'s wrong guesses against that client only: a stolen session spending its budget does not stop the owner changing the password elsewhere', async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerEmailAndIp.windowMs)
    const account = await createTestAccount(service.app)
    const thief = randomClientAddress()
    for (let attempt = 0; attempt < 11; attempt++) {
      await service.app.inject({
        method: 'PUT', url: '/api/v1/me/password', headers: asBrowser(account), remoteAddress: thief, payload: { currentPassword: `guess ${attempt}`, newPassword: 'a new passphrase' },
      })
    }
    const owner = await service.app.inject({
      method: 'PUT', url: '/api/v1/me/password', headers: asBrowser(account), remoteAddress: randomClientAddress(),
      payload: { currentPassword: account.password, newPassword: 'the owner\'s new passphrase' },
    })
    expect(owner.statusCode).toBe(204)
  })

  it('shares the budget with log-ins from the same client: five wrong log-ins and five wrong guesses here spend it', async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerEmailAndIp.windowMs)
    const account = await createTestAccount(service.app)
    const client = randomClientAddress()
    for (let attempt = 0; attempt < 5; attempt++) {
      const logInAttempt = await service.app.inject({ method: 'POST', url: '/api/v1/sessions', remoteAddress: client, payload: { email: account.email, password: `guess ${attempt}` } })
      expect(logInAttempt.statusCode).toBe(401)
      const guess = await service.app.inject({
        method: 'PUT', url: '/api/v1/me/password', headers: asBrowser(account), remoteAddress: client, payload: { currentPassword: `guess ${attempt}`, newPassword: 'a new passphrase' },
      })
      expect(guess.statusCode).toBe(400)
    }
    const refused = await service.app.inject({
      method: 'PUT', url: '/api/v1/me/password', headers: asBrowser(account), remoteAddress: client, payload: { currentPassword: account.password, newPassword: 'a new passphrase' },
    })
    expect(refused.statusCode).toBe(429)
  })
})
