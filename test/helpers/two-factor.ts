import { Secret, TOTP } from 'otpauth'
import type { App } from '../../src/app.js'
import { asBrowser, randomClientAddress, type TestAccount } from './dashboard-client.js'

const STEP_MS = 30_000

/** The code an authenticator app with `secret` shows `stepsFromNow` steps of 30 s from now. */
export function authenticatorCode(secret: string, stepsFromNow = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + stepsFromNow * STEP_MS })
}

/**
 * The authenticator app of a test: its codes as the server takes them. The server accepts a code
 * once per 30-second step (a replay is refused), so each code comes from a later step than the
 * last one given, waiting for it if need be, and never from a step's last seconds, which could
 * end before the request arrives. `takenAt`: a code of that moment's step was given already (the
 * one enableTwoFactor turned it on with).
 */
export function authenticatorApp(secret: string, takenAt?: number) {
  let lastStep = takenAt === undefined ? -1 : Math.floor(takenAt / STEP_MS)
  return {
    async code(): Promise<string> {
      for (;;) {
        const now = Date.now()
        const step = Math.floor(now / STEP_MS)
        const left = (step + 1) * STEP_MS - now
        if (step > lastStep && left > 3_000) {
          lastStep = step
          return authenticatorCode(secret)
        }
        await new Promise((resolve) => setTimeout(resolve, left + 100))
      }
    },
    /** Six digits that are the code of no step the server accepts now (the one either side included). */
    wrongCode(): string {
      const near = [-1, 0, 1].map((steps) => authenticatorCode(secret, steps))
      return ['000000', '111111', '222222'].find((code) => !near.includes(code)) ?? '333333'
    },
  }
}

/**
 * A log-in through the API from an address of its own (its own budgets), as another device would
 * make it; with `cookie` (the owner's device cookies: tollgate_device_2fa, set by a log-in that gave
 * a right code), one the account's budget of codes from everywhere (10 an hour) spares. Answers the
 * status, the error's code and the cookies it set. Without a code, an account with two-factor on
 * answers two_factor_required to the right password and invalid_credentials to a wrong one.
 */
export async function logInElsewhere(app: App, account: Pick<TestAccount, 'email' | 'password'>, code?: string, cookie?: string) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/sessions',
    payload: { email: account.email, password: account.password, ...(code === undefined ? {} : { code }) },
    ...(cookie === undefined ? {} : { headers: { cookie } }),
    remoteAddress: randomClientAddress(),
  })
  const error = response.statusCode === 200 ? undefined : response.json<{ error: { code: string } }>().error.code
  return { status: response.statusCode, error, cookies: response.cookies }
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
