import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { currentSetupCode } from '../../src/routes/v1/accounts/announce-setup-code.js'
import { findAccessibilityViolations, hasChromium, openDashboard, type OpenDashboard } from './dashboard-support.js'

/**
 * A production server's default (SIGNUPS=first), in Chromium: its operator signs up, and from
 * then on the dashboard offers no sign-up to anyone.
 */
describe.skipIf(!hasChromium())('signing up and logging in to the dashboard (SIGNUPS=first)', () => {
  let dashboard: OpenDashboard
  beforeAll(async () => {
    dashboard = await openDashboard({ env: { SIGNUPS: 'first' } })
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('lets the operator sign up first, with the setup code from the log, then shows no sign-up form or link', async () => {
    const { page, origin, pageErrors, service } = dashboard
    await page.goto(`${origin}/dashboard/`)
    await page.getByRole('link', { name: 'Create an account' }).click()
    await page.getByLabel('E-mail address').fill('operator@example.com')
    await page.getByLabel('Password').fill('correct horse battery staple')
    // Whoever reaches a fresh server first does not get it without the code its log shows.
    await page.getByLabel('Setup code').fill('AAAA-BBBB-CCCC-DDDD')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.locator('#auth-setupCode-error').filter({ hasText: "not the code in the server's log" }).waitFor()
    expect(await page.getByLabel('Setup code').getAttribute('aria-invalid')).toBe('true')
    expect(await findAccessibilityViolations(page)).toEqual([])
    await page.getByLabel('Setup code').fill(await currentSetupCode(service.app))
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()

    await page.getByRole('button', { name: 'Log out', exact: true }).click()
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    // The answer of GET /api/v1/sign-up removes the link once it arrives.
    await expect.poll(() => page.getByRole('link', { name: 'Create an account' }).count()).toBe(0)

    await page.goto(`${origin}/dashboard/signup`)
    await page.getByText('Sign-ups are closed on this server. Ask its operator for an account.').waitFor()
    expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(0)
    expect(await findAccessibilityViolations(page)).toEqual([])
    expect(pageErrors).toEqual([])
  }, 60_000)

  it('says why, on the log-in page, when the browser keeps no session cookie (a production server over plain http)', async () => {
    const { page, origin } = dashboard
    // The browser drops a Secure cookie set over plain http to an address other than localhost:
    // here the cookie is taken off the log-in's answer, as it would be.
    await page.route('**/api/v1/sessions', async (route) => {
      const request = route.request()
      if (request.method() !== 'POST') return route.continue()
      // Sent from here, not through the browser (whose cookie jar would keep the cookie).
      const response = await fetch(request.url(), { method: 'POST', headers: await request.allHeaders(), body: request.postData() })
      return route.fulfill({ status: response.status, contentType: 'application/json', body: await response.text() })
    })
    await page.context().clearCookies()
    await page.goto(`${origin}/dashboard/login`)
    await page.getByLabel('E-mail address').fill('operator@example.com')
    await page.getByLabel('Password').fill('correct horse battery staple')
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByText('You were logged in, but this browser did not keep the session cookie: in production, open the dashboard over HTTPS.').waitFor()
    expect(await page.getByRole('heading', { name: 'Log in' }).count()).toBe(1)
    expect(await page.getByText('Your session has ended').count()).toBe(0)
    await page.unroute('**/api/v1/sessions')
  }, 60_000)
})
