import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { credentialRateLimits, knownDeviceAddressLimit } from '../../src/routes/v1/accounts/rate-limits.js'
import { createTestAccount, OWN_ORIGIN, randomClientAddress, sessionCookieOf, type TestAccount } from '../helpers/dashboard-client.js'
import { deviceCookieOf, spendBudgetFromEverywhere } from '../helpers/known-device.js'
import { startWithinOneWindow } from '../helpers/rate-limit-window.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

describe('the known-browser cookie', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp()
  })
  afterAll(() => service.close())

  const logIn = (who: Pick<TestAccount, 'email' | 'password'>, options: { device?: string; remoteAddress?: string } = {}) =>
    service.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      payload: { email: who.email, password: who.password },
      remoteAddress: options.remoteAddress ?? randomClientAddress(),
      ...(options.device === undefined ? {} : { headers: { cookie: options.device } }),
    })

  /** An account whose browser at `home` logged in once, and that browser's cookies. */
  async function knownBrowser(home: string): Promise<{ owner: TestAccount; device: string; session: string }> {
    const owner = await createTestAccount(service.app)
    const first = await logIn(owner, { remoteAddress: home })
    const device = deviceCookieOf(first.headers['set-cookie'])
    if (device === undefined) throw new Error('the log-in set no known-browser cookie')
    return { owner, device, session: sessionCookieOf(first.headers['set-cookie']) }
  }

  it('no longer spares the account-wide limit after a password change; the browser that changed it gets a new cookie that does', { timeout: 60_000 }, async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerEmail.windowMs, 30_000)
    const home = randomClientAddress()
    const { owner, device, session } = await knownBrowser(home)
    await spendBudgetFromEverywhere(service.app, owner.email)
    // The legitimate known browser is spared.
    expect((await logIn(owner, { device, remoteAddress: home })).statusCode).toBe(200)

    const changed = await service.app.inject({
      method: 'PUT', url: '/api/v1/me/password', remoteAddress: home,
      headers: { cookie: `${session}; ${device}`, origin: OWN_ORIGIN }, payload: { currentPassword: owner.password, newPassword: 'a brand new passphrase' },
    })
    expect(changed.statusCode, changed.body).toBe(204)
    const renewed = deviceCookieOf(changed.headers['set-cookie'])
    expect(renewed).toMatch(/^tollgate_device=\d+\.[A-Za-z0-9_-]{43}$/)
    expect(renewed).not.toBe(device)

    const withNewPassword = { email: owner.email, password: 'a brand new passphrase' }
    const stale = await logIn(withNewPassword, { device, remoteAddress: home })
    expect(stale.statusCode).toBe(429)
    expect(stale.json().error.message).toContain('Too many log-in attempts for this account from everywhere')
    expect((await logIn(withNewPassword, { device: renewed!, remoteAddress: home })).statusCode).toBe(200)
  })

  it('no longer spares the account-wide limit once the owner logs out everywhere else', { timeout: 60_000 }, async () => {
    await startWithinOneWindow(credentialRateLimits.logInPerEmail.windowMs, 30_000)
    const home = randomClientAddress()
    const { owner, device } = await knownBrowser(home)
    // Another browser, which logged in too, logs the first out everywhere else.
    const elsewhere = await logIn(owner)
    const ended = await service.app.inject({
      method: 'DELETE', url: '/api/v1/sessions/others', headers: { cookie: sessionCookieOf(elsewhere.headers['set-cookie']), origin: OWN_ORIGIN },
    })
    expect(ended.statusCode, ended.body).toBe(200)
    await spendBudgetFromEverywhere(service.app, owner.email)
    expect((await logIn(owner, { device, remoteAddress: home })).statusCode).toBe(429)
  })

  it(`spares only ${knownDeviceAddressLimit.limit} addresses per window with one cookie: a copy at a fourth address counts as a stranger`, { timeout: 60_000 }, async () => {
    await startWithinOneWindow(knownDeviceAddressLimit.windowMs, 30_000)
    const home = randomClientAddress()
    const { owner, device } = await knownBrowser(home)
    await spendBudgetFromEverywhere(service.app, owner.email)
    const addresses = [home, randomClientAddress(), randomClientAddress()]
    for (const address of addresses) expect((await logIn(owner, { device, remoteAddress: address })).statusCode).toBe(200)
    const fourth = await logIn(owner, { device, remoteAddress: randomClientAddress() })
    expect(fourth.statusCode).toBe(429)
    expect(fourth.json().error.message).toContain('Too many log-in attempts for this account from everywhere')
    // The first three stay spared: the owner's own browser is not locked out by the copy.
    for (const address of addresses) expect((await logIn(owner, { device, remoteAddress: address })).statusCode).toBe(200)
  })
})
