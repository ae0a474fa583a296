import type { App } from '../../src/app.js'
import { credentialRateLimits } from '../../src/routes/v1/accounts/rate-limits.js'
import { randomClientAddress } from './dashboard-client.js'

/** The known-browser cookie (name=value) a log-in answer set, if any. */
export function deviceCookieOf(setCookie: string | string[] | undefined): string | undefined {
  return [setCookie ?? []].flat().find((header) => /^(__Host-)?tollgate_device=/.test(header))?.split(';')[0]
}

/** Spends the account's log-in budget from everywhere: wrong passwords, each from a new address. */
export async function spendBudgetFromEverywhere(app: App, email: string): Promise<void> {
  for (let attempt = 0; attempt < credentialRateLimits.logInPerEmail.limit; attempt++) {
    await app.inject({ method: 'POST', url: '/api/v1/sessions', payload: { email, password: 'wrong password!' }, remoteAddress: randomClientAddress() })
  }
}
