import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPORTED_MISMATCH_OUTCOME } from '../../src/storage/sql/siteverify-count-repository.js'
import type { CreatedSite } from '../helpers/dashboard-client.js'
import { expectNoAccessibilityViolations, hasChromium, openLoggedInDashboardWithSite, type OpenDashboard } from './dashboard-support.js'

/** The address check of a site's tokens on its Settings page: chosen, saved, kept after a reload. */
describe.skipIf(!hasChromium())("a site's address check in the dashboard", () => {
  let dashboard: OpenDashboard
  let page: Page
  let site: CreatedSite

  beforeAll(async () => {
    ;({ dashboard, site } = await openLoggedInDashboardWithSite({ name: 'Checked shop' }))
    page = dashboard.page
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('starts off, saves refuse, and shows it after a reload', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/settings`)
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    const check = page.getByLabel('Address check at Siteverify')
    expect(await check.inputValue()).toBe('off')
    await check.selectOption({ label: 'Refuse tokens sent from another address' })
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.locator('.notice--success').filter({ hasText: 'Settings saved.' }).waitFor()
    expect((await dashboard.service.app.sites.findById(site.id))?.settings.tokenAddressCheck).toBe('refuse')
    await expectNoAccessibilityViolations(page, 'settings with the address check')

    await page.reload()
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    expect(await page.getByLabel('Address check at Siteverify').inputValue()).toBe('refuse')
    // Saving again without a change sends nothing.
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.locator('.notice').filter({ hasText: 'Nothing changed.' }).waitFor()
    expect(dashboard.pageErrors).toEqual([])
  })

  it("says on the Siteverify card how many tokens were redeemed from another address, which refuse would have refused", async () => {
    // Two redemptions counted, one of them from another address (as Siteverify counts them under report).
    const counts = dashboard.service.app.siteverifyCounts
    counts.count(site.id, 'success')
    counts.count(site.id, 'success')
    counts.count(site.id, REPORTED_MISMATCH_OUTCOME)
    await counts.flush()
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/analytics`)
    const line = page.locator('[data-siteverify-other-address]')
    await line.waitFor()
    expect(await line.textContent()).toBe(
      '1 of them was sent with a remoteip outside the address that earned the token: the address check reports it, and set to refuse it would have refused that token.',
    )
    expect(dashboard.pageErrors).toEqual([])
  })
})
