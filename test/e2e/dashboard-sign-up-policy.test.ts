import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findAccessibilityViolations, hasChromium, openDashboard, type OpenDashboard } from './dashboard-support.js'

/**
 * A production server's default (SIGNUPS=first), in Chromium: its operator signs up, and from
 * then on the dashboard offers no sign-up to anyone.
 */
describe.skipIf(!hasChromium())('the dashboard with SIGNUPS=first', () => {
  let dashboard: OpenDashboard
  beforeAll(async () => {
    dashboard = await openDashboard({ env: { SIGNUPS: 'first' } })
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('lets the operator sign up first, then shows no sign-up form or link', async () => {
    const { page, origin, pageErrors } = dashboard
    await page.goto(`${origin}/dashboard/`)
    await page.getByRole('link', { name: 'Create an account' }).click()
    await page.getByLabel('E-mail address').fill('operator@example.com')
    await page.getByLabel('Password').fill('correct horse battery staple')
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
})
