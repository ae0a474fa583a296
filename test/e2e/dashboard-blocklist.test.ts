import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CreatedSite } from '../helpers/dashboard-client.js'
import { expectNoAccessibilityViolations, hasChromium, openLoggedInDashboardWithSite, type OpenDashboard } from './dashboard-support.js'

/**
 * A site's blocklist on its Settings page: blocked addresses and countries are saved, shown as the
 * API stored them (normalized) and kept after a reload; a bad entry is refused beside its field.
 */
describe.skipIf(!hasChromium())("a site's blocklist in the dashboard", () => {
  let dashboard: OpenDashboard
  let page: Page
  let site: CreatedSite

  beforeAll(async () => {
    ;({ dashboard, site } = await openLoggedInDashboardWithSite({ name: 'Blocking shop' }))
    page = dashboard.page
  }, 120_000)
  afterAll(() => dashboard?.close())

  const storedSettings = async () => (await dashboard.service.app.sites.findById(site.id))?.settings

  it('refuses a country code that is not one beside its field, and saves nothing', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/settings`)
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    await page.getByLabel('Blocked addresses').fill('198.51.100.7/24')
    await page.getByLabel('Blocked countries').fill('ru\nzz')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.locator('#settings-blockedCountries-error').filter({ hasText: '"zz"' }).waitFor()
    expect(await page.getByLabel('Blocked countries').getAttribute('aria-invalid')).toBe('true')
    expect(await page.getByLabel('Blocked addresses').getAttribute('aria-invalid')).not.toBe('true')
    await expectNoAccessibilityViolations(page, 'settings with a blocklist error')
    expect(await storedSettings()).toMatchObject({ blockedAddresses: [], blockedCountries: [] })
  })

  it('saves blocked addresses and countries as the API stores them, and keeps them after a reload', async () => {
    await page.getByLabel('Blocked addresses').fill('198.51.100.7/24\n2001:DB8::/32')
    await page.getByLabel('Blocked countries').fill('ru kp')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.locator('.notice--success').filter({ hasText: 'Settings saved.' }).waitFor()
    expect(await page.getByLabel('Blocked addresses').inputValue()).toBe('198.51.100.0/24\n2001:db8::/32')
    expect(await page.getByLabel('Blocked countries').inputValue()).toBe('KP\nRU')
    expect(await storedSettings()).toMatchObject({ blockedAddresses: ['198.51.100.0/24', '2001:db8::/32'], blockedCountries: ['KP', 'RU'] })

    await page.reload()
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    expect(await page.getByLabel('Blocked addresses').inputValue()).toBe('198.51.100.0/24\n2001:db8::/32')
    expect(await page.getByLabel('Blocked countries').inputValue()).toBe('KP\nRU')
    expect(dashboard.pageErrors).toEqual([])
  })
})
