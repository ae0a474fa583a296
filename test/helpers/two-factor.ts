import { Secret, TOTP } from 'otpauth'
import type { App } from '../../src/app.js'
import { asBrowser, randomClientAddress, type TestAccount } from './dashboard-client.js'

const STEP_MS = 30_000

/** The code an authenticator app with `secret` shows `stepsFromNow` steps of 30 s from now. */
export function authenticatorCode(secret: string, stepsFromNow = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + stepsFromNow * STEP_MS })
}

export interface TwoFactorAccount {
  /** The secret the authenticator app holds. */
  secret: string
  recoveryCodes: string[]
  /** The code that turned it on, which was taken: it logs nobody in. */
  usedCode: string
  /** The cookie the browser that turned it on got: it passed the second factor (a device cookie of its own). */
  secondFactorDeviceCookie: string
}

/**
 * Turns two-factor authentication on for the account through the API, as the dashboard does,
 * confirming with the current step's code: a log-in right after needs the next step's
 * (authenticatorCode(secret, 1)), as a code works once.
 */
export async function enableTwoFactor(app: App, account: Pick<TestAccount, 'cookie' | 'password'>): Promise<TwoFactorAccount> {
  const setup = await app.inject({ method: 'POST', url: '/api/v1/me/two-factor/setup', headers: asBrowser(account), payload: {} })
  if (setup.statusCode !== 200) throw new Error(`two-factor setup answered ${setup.statusCode}: ${setup.body}`)
  const { secret, setupToken } = setup.json<{ secret: string; setupToken: string }>()
  const usedCode = authenticatorCode(secret)
  const enabled = await app.inject({
    method: 'POST',
    url: '/api/v1/me/two-factor',
    headers: asBrowser(account),
    payload: { setupToken, code: usedCode, password: account.password },
    // The password's check counts against the budget of the client's address: a test's own.
    remoteAddress: randomClientAddress(),
  })
  if (enabled.statusCode !== 200) throw new Error(`turning two-factor on answered ${enabled.statusCode}: ${enabled.body}`)
  return {
    secret,
    usedCode,
    recoveryCodes: enabled.json<{ recoveryCodes: string[] }>().recoveryCodes,
    secondFactorDeviceCookie: secondFactorDeviceCookieOf(enabled.headers['set-cookie']),
  }
}

/** The Cookie header of the second-factor device cookie an answer set ('' when it set none). */
export function secondFactorDeviceCookieOf(setCookie: string | string[] | undefined): string {
  return [setCookie ?? []].flat().find((cookie) => /^(__Host-)?tollgate_device_2fa=/.test(cookie))?.split(';')[0] ?? ''
}
