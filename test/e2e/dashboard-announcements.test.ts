import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CreatedSite, TestAccount } from '../helpers/dashboard-client.js'
import { findLandmarkViolations, focusedId, hasChromium, openLoggedInDashboardWithSite, type OpenDashboard } from './dashboard-support.js'

/** The texts of the page's live regions of `role` (alert or status), hidden ones included. */
function liveTexts(page: Page, role: 'alert' | 'status'): Promise<string[]> {
  return page.evaluate((wanted) => Array.from(document.querySelectorAll(`[role="${wanted}"]`), (region) => region.textContent ?? ''), role)
}

/** What the focused element is, for a screen reader: its tag, id and text. */
function readFocus(page: Page): Promise<{ tag: string; id: string; text: string }> {
  return page.evaluate(() => {
    const element = document.activeElement
    return { tag: element?.tagName.toLowerCase() ?? '', id: element?.id ?? '', text: (element?.textContent ?? '').trim() }
  })
}

/**
 * What a screen reader user hears, and where the keyboard is, after the dashboard's changes:
 * each is said once, and the focus never falls to the page's start or stays behind.
 */
describe.skipIf(!hasChromium())('the dashboard with a screen reader', () => {
  let dashboard: OpenDashboard
  let page: Page
  let account: TestAccount
  let site: CreatedSite

  beforeAll(async () => {
    // A webhook that answers nothing (the discard port): its test event fails.
    ;({ dashboard, account, site } = await openLoggedInDashboardWithSite({
      name: 'Announced shop',
      settings: { webhookUrl: 'http://127.0.0.1:9/hooks/tollgate', webhookSecret: 'whsec-e2e-0123456789abcdef' },
    }))
    page = dashboard.page
  }, 120_000)
  afterAll(() => dashboard?.close())

  it("says a field's error in an alert when Enter was pressed in that field, and only then", async () => {
    await page.goto(`${dashboard.origin}/dashboard/api-keys`)
    const form = page.locator('section[aria-labelledby="create-key-heading"]')
    await form.getByLabel('Name').fill('Grafana')
    const password = form.getByLabel('Password', { exact: true })
    await password.fill('not the password')
    // Clicked: focus moves to the field, which is read with its error; no alert says it again.
    await form.getByRole('button', { name: 'Create key' }).click()
    await form.locator('#api-key-password-error').filter({ hasText: 'is not your current password' }).waitFor()
    await expect.poll(() => focusedId(page)).toBe('api-key-password')
    expect((await liveTexts(page, 'alert')).join(' ')).not.toContain('is not your current password')

    // Enter in the field that fails: it has the focus already, so an alert says its error.
    await password.press('Enter')
    await expect.poll(async () => (await liveTexts(page, 'alert')).join(' ')).toMatch(/Password: .*is not your current password/)
    expect(await focusedId(page)).toBe('api-key-password')
  }, 60_000)

  it('names the copy button of a new API key "Copy API key"', async () => {
    const form = page.locator('section[aria-labelledby="create-key-heading"]')
    await form.getByLabel('Password', { exact: true }).fill(account.password)
    await form.getByRole('button', { name: 'Create key' }).click()
    await page.getByLabel('API key', { exact: true }).waitFor()
    expect(await page.getByRole('button', { name: 'Copy API key', exact: true }).count()).toBe(1)
  }, 60_000)

  it('names no two landmarks alike where tables scroll in their sections', async () => {
    // Two keys listed (createTestAccount's and the new one): the table and its section.
    await page.getByRole('table').waitFor()
    expect(await findLandmarkViolations(page)).toEqual([])
    await page.goto(`${dashboard.origin}/dashboard/account`)
    await page.getByRole('table').first().waitFor()
    expect(await findLandmarkViolations(page)).toEqual([])
    await page.goto(`${dashboard.origin}/dashboard/activity`)
    await page.getByRole('table').waitFor()
    expect(await findLandmarkViolations(page)).toEqual([])
  }, 60_000)

  it('moves focus to the new heading after "Create site" on a form that was loaded directly', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/new`)
    await page.getByLabel('Name').fill('Direct shop')
    await page.getByRole('button', { name: 'Create site' }).click()
    await page.getByRole('heading', { name: 'Direct shop is ready' }).waitFor()
    await expect.poll(() => readFocus(page)).toMatchObject({ tag: 'h1', text: 'Direct shop is ready' })
  }, 60_000)

  it('moves focus to the new secret key after a rotation', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/integration`)
    await page.getByRole('button', { name: 'Rotate secret key' }).click()
    const dialog = page.getByRole('dialog', { name: 'Rotate the secret key?' })
    await dialog.getByRole('button', { name: 'Rotate secret key' }).click()
    await page.getByLabel('Secret key', { exact: true }).waitFor()
    await expect.poll(() => focusedId(page)).toBe('secret-key')
  }, 60_000)

  it("says a failed test event once: in the outcome's live region, with no live region in it", async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/webhook`)
    await page.getByRole('button', { name: 'Send test event' }).click()
    const outcome = page.locator('.test-outcome')
    await outcome.locator('.notice--error').waitFor()
    expect(await outcome.getAttribute('aria-live')).toBe('polite')
    expect(await outcome.locator('[role], [aria-live]').count()).toBe(0)
  }, 60_000)

  it('says that Generate filled in a signing secret', async () => {
    await page.getByRole('button', { name: 'Generate' }).click()
    await expect.poll(() => liveTexts(page, 'status')).toContain('Signing secret generated.')
  }, 60_000)

  it('says which range the analytics show once a picked one has loaded', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}`)
    await page.getByRole('heading', { name: 'Verifications over time' }).waitFor()
    expect(await liveTexts(page, 'status')).not.toContain('Showing the last 24 hours.')
    await page.getByRole('radio', { name: 'Last 7 days' }).check()
    await expect.poll(() => liveTexts(page, 'status')).toContain('Showing the last 7 days.')
  }, 60_000)
})
