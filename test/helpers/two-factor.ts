import { Secret, TOTP } from 'otpauth'
import type { App } from '../../src/app.js'
import { asBrowser, randomClientAddress, type TestAccount } from './dashboard-client.js'

const STEP_MS = 30_000

/** The code an authenticator app with `secret` shows `stepsFromNow` steps of 30 s from now. */
export function authenticatorCode(secret: string, stepsFromNow = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + stepsFromNow * STEP_MS })
}

/** The code of `step` (a 30-second step since the epoch). */
function codeOfStep(secret: string, step: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: step * STEP_MS })
}

/**
 * The authenticator app of a test: its codes as the server takes them. The server accepts a code
 * once per 30-second step (a replay is refused), of the current step or the one either side (an
 * app's clock may drift). So each code comes from a later step than the last one given: the
 * current step's (taken until the next step ends, however late in its step it is given), else the
 * next step's, which the server takes at once, as from an app whose clock runs a little ahead.
 * Only when both were given does it wait for a step to begin. `takenAt`: a code of that moment's
 * step was given already (the one enableTwoFactor turned it on with: its usedAt).
 */
export function authenticatorApp(secret: string, takenAt?: number) {
  let lastStep = takenAt === undefined ? -1 : Math.floor(takenAt / STEP_MS)
  return {
    async code(): Promise<string> {
      for (;;) {
        const now = Date.now()
        const step = Math.floor(now / STEP_MS)
        const earliest = Math.max(lastStep + 1, step)
        if (earliest <= step + 1) {
          lastStep = earliest
          return codeOfStep(secret, earliest)
        }
        await new Promise((resolve) => setTimeout(resolve, (step + 1) * STEP_MS - now + 100))
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
  /** A moment of the step whose code turned it on (authenticatorApp's takenAt). */
  usedAt: number
  /** The cookie the browser that turned it on got: it passed the second factor (a device cookie of its own). */
  secondFactorDeviceCookie: string
}

/**
 * Turns two-factor authentication on for the account through the API, as the dashboard does,
 * confirming with the code of the step `stepsFromNow` steps from now, the current step's unless
 * told: a log-in right after needs a later step's (authenticatorCode(secret, 1)), as a code works
 * once. The step before (-1), which the server takes too, leaves both the current step's code and
 * the next one's to the test: two codes without waiting for a step (authenticatorApp(secret, usedAt)).
 */
export async function enableTwoFactor(app: App, account: Pick<TestAccount, 'cookie' | 'password'>, { stepsFromNow = 0 } = {}): Promise<TwoFactorAccount> {
  const setup = await app.inject({ method: 'POST', url: '/api/v1/me/two-factor/setup', headers: asBrowser(account), payload: {} })
  if (setup.statusCode !== 200) throw new Error(`two-factor setup answered ${setup.statusCode}: ${setup.body}`)
  const { secret, setupToken } = setup.json<{ secret: string; setupToken: string }>()
  // A step before now is taken only until the current step ends: not in its last seconds, which
  // could end before the request is checked (after the password's Argon2, slow on a loaded host).
  const left = STEP_MS - (Date.now() % STEP_MS)
  if (stepsFromNow < 0 && left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 100))
  const usedAt = Date.now() + stepsFromNow * STEP_MS
  const usedCode = codeOfStep(secret, Math.floor(usedAt / STEP_MS))
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
    usedAt,
    recoveryCodes: enabled.json<{ recoveryCodes: string[] }>().recoveryCodes,
    secondFactorDeviceCookie: secondFactorDeviceCookieOf(enabled.headers['set-cookie']),
  }
}

/** The Cookie header of the second-factor device cookie an answer set ('' when it set none). */
export function secondFactorDeviceCookieOf(setCookie: string | string[] | undefined): string {
  return [setCookie ?? []].flat().find((cookie) => /^(__Host-)?tollgate_device_2fa=/.test(cookie))?.split(';')[0] ?? ''
}
