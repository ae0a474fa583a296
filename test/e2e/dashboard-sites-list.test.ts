import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite } from '../helpers/site-sharing.js'
import { insertVerifications } from '../helpers/verification-rows.js'
import { expectNoAccessibilityViolations, hasChromium, openLoggedInDashboard, type OpenDashboard } from './dashboard-support.js'

const HOUR_MS = 3_600_000

/** The status line's text, which a screen reader announces (role=status). */
const countText = (page: Page) => page.locator('#site-filter-count[role="status"]').textContent()
const cardNames = (page: Page) => page.locator('.site-list__name a').allTextContents()

/**
 * An agency's dozen client sites in the dashboard: found with a filter box whose count a screen
 * reader hears, sorted by name, each card with its last 24 hours; deleting one asks for its name
 * and says who else loses it; one handed over to its client stays in the Activity page's filter.
 */
describe.skipIf(!hasChromium())("an agency's sites list", () => {
  let dashboard: OpenDashboard
  let page: Page
  let agency: TestAccount
  let colleague: TestAccount
  let client: TestAccount
  const sites: CreatedSite[] = []

  beforeAll(async () => {
    ;({ dashboard, account: agency } = await openLoggedInDashboard())
    page = dashboard.page
    const { app } = dashboard.service
    ;[colleague, client] = await Promise.all([createTestAccount(app), createTestAccount(app)])
    for (let number = 12; number >= 1; number -= 1) {
      const padded = String(number).padStart(2, '0')
      // Client 03 also sells books under an internationalized domain, which is stored in punycode.
      const domains = number === 3 ? ['shop.client03.example', 'b\u00FCcher.client03.example'] : [`shop.client${padded}.example`]
      sites.push(await createTestSite(app, agency, { name: `Client ${padded} shop`, domains }))
    }
    const clientSeven = sites.find((site) => site.name === 'Client 07 shop')
    const currentHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS
    await insertVerifications(app.database, [
      ...Array.from({ length: 5 }, () => ({ siteId: clientSeven?.id ?? '', createdAt: new Date(currentHour - 2 * HOUR_MS), action: 'allow' as const })),
      { siteId: clientSeven?.id ?? '', createdAt: new Date(currentHour - HOUR_MS), action: 'block', riskScore: 95 },
    ])
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('filters the sites by name, domain or site key, and announces how many match', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites`)
    await page.locator('.site-list__item').nth(11).waitFor()
    expect(await countText(page)).toBe('12 sites.')
    const filter = page.getByLabel('Filter sites')
    await filter.fill('client0')
    await expect.poll(() => countText(page)).toBe('9 of 12 sites match.')
    await filter.fill('SHOP.CLIENT07')
    await expect.poll(() => cardNames(page)).toEqual(['Client 07 shop'])
    expect(await countText(page)).toBe('1 of 12 sites match.')
    // The domain stored as xn--bcher-kva.client03.example, found as people type it, in part too.
    await filter.fill('B\u00DCCH')
    await expect.poll(() => cardNames(page)).toEqual(['Client 03 shop'])
    await filter.fill('b\u00FCcher.client03')
    await expect.poll(() => countText(page)).toBe('1 of 12 sites match.')
    await filter.fill(sites[0]?.siteKey.slice(0, 14) ?? '')
    await expect.poll(() => cardNames(page)).toEqual(['Client 12 shop'])
    await filter.fill('nowhere')
    await expect.poll(() => countText(page)).toBe('No site\'s name, domain or site key holds “nowhere”.')
    expect(await page.locator('.site-list__item').count()).toBe(0)
    // Kept in the address: a reload shows the same.
    await filter.fill('client 1')
    await page.reload()
    await expect.poll(() => cardNames(page)).toEqual(['Client 12 shop', 'Client 11 shop', 'Client 10 shop'])
    expect(await page.getByLabel('Filter sites').inputValue()).toBe('client 1')
    await expectNoAccessibilityViolations(page, 'filtered sites list')
  }, 60_000)

  it("sorts by name, and shows each site's verifications and blocked ones of the last 24 hours", async () => {
    await page.getByLabel('Filter sites').fill('')
    await page.getByLabel('Sort').selectOption('name')
    await expect.poll(async () => (await cardNames(page))[0]).toBe('Client 01 shop')
    expect((await cardNames(page)).slice(0, 3)).toEqual(['Client 01 shop', 'Client 02 shop', 'Client 03 shop'])
    const seven = page.locator('.site-list__item').filter({ hasText: 'Client 07 shop' })
    expect(await seven.locator('.site-list__summary').textContent()).toBe('6 verifications, 1 blocked')
    const one = page.locator('.site-list__item').filter({ hasText: 'Client 01 shop' })
    expect(await one.locator('.site-list__summary').textContent()).toBe('0 verifications, 0 blocked')
  })

  it("asks for the site's name before deleting it, and says how many other members lose access", async () => {
    const target = sites.find((site) => site.name === 'Client 05 shop')
    const { app } = dashboard.service
    await shareSite(app, agency, colleague, target?.id ?? '', 'admin')
    await shareSite(app, agency, client, target?.id ?? '', 'viewer')
    await page.goto(`${dashboard.origin}/dashboard/sites/${target?.id ?? ''}/integration`)
    await page.getByRole('button', { name: 'Delete site' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete Client 05 shop?' })
    await dialog.getByText('Its 2 other members lose access to it.').waitFor()
    const confirm = dialog.getByRole('button', { name: 'Delete site' })
    const name = dialog.getByLabel("Type the site's name to confirm")
    // Another client's name, and Enter: nothing is deleted.
    await name.fill('Client 06 shop')
    expect(await confirm.isDisabled()).toBe(true)
    await name.press('Enter')
    expect(await dialog.isVisible()).toBe(true)
    await expectNoAccessibilityViolations(page, 'site deletion dialog')
    await name.fill('Client 05 shop')
    await name.press('Enter')
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    expect((await app.inject({ method: 'GET', url: `/api/v1/sites/${target?.id ?? ''}`, headers: asScript(agency) })).statusCode).toBe(404)
  }, 60_000)

  it('keeps a site handed over to its client in the Activity filter', async () => {
    const handedOver = sites.find((site) => site.name === 'Client 04 shop')
    const { app } = dashboard.service
    await shareSite(app, agency, client, handedOver?.id ?? '', 'admin')
    const transferred = await app.inject({
      method: 'POST',
      url: `/api/v1/sites/${handedOver?.id ?? ''}/transfer`,
      headers: asBrowser(agency),
      payload: { accountId: client.id, password: agency.password },
    })
    expect(transferred.statusCode, transferred.body).toBe(200)
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/sites/${handedOver?.id ?? ''}/members/${agency.id}`, headers: asScript(client) })).statusCode).toBe(204)

    await page.goto(`${dashboard.origin}/dashboard/activity`)
    const filter = page.getByLabel('Site')
    await expect.poll(() => filter.locator('option').allTextContents()).toContain('Client 04 shop (no access)')
    expect(await filter.locator('option').allTextContents()).toContain('Client 05 shop (deleted)')
    await filter.selectOption({ label: 'Client 04 shop (no access)' })
    await page.waitForFunction((id) => {
      const shown = [...document.querySelectorAll('.activity tbody tr')]
      return shown.length > 0 && shown.every((row) => row.getAttribute('data-site') === id)
    }, handedOver?.id ?? '')
  }, 60_000)
})
