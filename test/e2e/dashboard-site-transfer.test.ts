import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite } from '../helpers/site-sharing.js'
import { expectNoAccessibilityViolations, hasChromium, openLoggedInDashboard, prepareScreenshotDirectory, saveScreenshot, type OpenDashboard } from './dashboard-support.js'

const siteName = 'Handed-over shop'

/**
 * The owner of a shared site, in Chromium: changing another member's role is confirmed in a
 * dialog that names the member and the new role; "Make owner" is confirmed in one that names the
 * member and says the owner becomes an admin, and asks for the password (a wrong one is said
 * beside its field), and the page then offers what an admin may do (no Delete site, no Make
 * owner). The transfer is made with the keyboard alone.
 */
describe.skipIf(!hasChromium())("handing a site over to a member in the dashboard", () => {
  let dashboard: OpenDashboard
  let page: Page
  let owner: TestAccount
  let member: TestAccount
  let siteId = ''

  beforeAll(async () => {
    ;[{ dashboard, account: owner }] = await Promise.all([openLoggedInDashboard(), prepareScreenshotDirectory()])
    page = dashboard.page
    const app = dashboard.service.app
    siteId = (await createTestSite(app, owner, { name: siteName })).id
    member = await createTestAccount(app)
    await shareSite(app, owner, member, siteId, 'viewer')
  }, 120_000)
  afterAll(() => dashboard?.close())

  const memberRow = () => page.locator('tbody tr').filter({ hasText: member.email })
  const roleOf = async (account: TestAccount) =>
    (await dashboard.service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}`, headers: asBrowser(account) })).json<{ role: string }>().role

  it("confirms a change of another member's role, naming the member and the role; Cancel keeps the role", async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${siteId}/members`)
    const roleSelect = memberRow().getByLabel(`Role of ${member.email}`)
    await roleSelect.selectOption('admin')
    const dialog = page.getByRole('dialog', { name: "Change this member's role?" })
    await memberRow().getByRole('button', { name: `Save role for ${member.email}: admin` }).click()
    await dialog.getByText(`${member.email} becomes an admin of ${siteName}`).waitFor()
    await expectNoAccessibilityViolations(page, "changing a member's role")
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })
    // Nothing was saved, and the select shows the saved role again.
    expect(await roleSelect.inputValue()).toBe('viewer')
    expect(await roleOf(member)).toBe('viewer')

    await roleSelect.selectOption('admin')
    await memberRow().getByRole('button', { name: `Save role for ${member.email}: admin` }).click()
    await dialog.getByRole('button', { name: 'Change role' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await memberRow().getByRole('button', { name: /^Save role/ }).waitFor({ state: 'detached' })
    // The role saved stays in the select while the list is read again: the old one never comes back.
    await expect.poll(() => roleSelect.inputValue()).toBe('admin')
    expect(await roleOf(member)).toBe('admin')
    // Focus is not lost with the Save role button: it is on the tab's heading.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('members-heading')
  }, 60_000)

  it('makes the member the owner with the keyboard, after a dialog saying who and that the owner becomes an admin', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${siteId}/members`)
    const makeOwner = memberRow().getByRole('button', { name: `Make owner ${member.email}` })
    await makeOwner.waitFor()
    // The owner's own row offers nothing of the kind.
    expect(await page.getByRole('button', { name: /^Make owner/ }).count()).toBe(1)
    const dialog = page.getByRole('dialog', { name: 'Make this member the owner?' })
    await makeOwner.focus()
    await page.keyboard.press('Enter')
    await dialog.getByText(`${member.email} becomes the owner of ${siteName}`).waitFor()
    await dialog.getByText('You will become an admin.').waitFor()
    await expectNoAccessibilityViolations(page, 'making a member the owner')
    await saveScreenshot(page, 'members-make-owner')
    // Cancel has the focus: Enter there changes nothing.
    await page.keyboard.press('Enter')
    await dialog.waitFor({ state: 'hidden' })
    expect(await roleOf(owner)).toBe('owner')

    await makeOwner.focus()
    await page.keyboard.press('Enter')
    await dialog.getByRole('button', { name: 'Make owner' }).waitFor()
    // The password is asked for (a session's alone; a leaked API key cannot hand the site over):
    // from Cancel, Shift+Tab reaches its field, and Enter there confirms.
    await page.keyboard.press('Shift+Tab')
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('transfer-password')
    await page.keyboard.type(`${owner.password}-wrong`)
    await page.keyboard.press('Enter')
    // A wrong one is said beside its field; the dialog stays, nothing changed.
    await dialog.getByText('is not your current password').waitFor()
    expect(await roleOf(owner)).toBe('owner')
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('transfer-password')
    await page.keyboard.press('ControlOrMeta+A')
    await page.keyboard.type(owner.password)
    await page.keyboard.press('Enter')
    await dialog.waitFor({ state: 'hidden' })

    // The table and the page follow: the member owns the site, the account is an admin of it.
    await page.locator('.page-heading .badge').filter({ hasText: 'Shared with you: admin' }).waitFor()
    await memberRow().locator('td').nth(1).filter({ hasText: /^owner$/ }).waitFor()
    await page.getByLabel(`Role of ${owner.email}`).waitFor()
    expect(await page.getByLabel(`Role of ${owner.email}`).inputValue()).toBe('admin')
    expect(await page.getByRole('button', { name: /^Make owner/ }).count()).toBe(0)
    expect(await roleOf(member)).toBe('owner')
    expect(await roleOf(owner)).toBe('admin')
    await expectNoAccessibilityViolations(page, 'members after the transfer')

    await page.getByRole('navigation', { name: 'Site sections' }).getByRole('link', { name: 'Keys and snippet', exact: true }).click()
    await page.getByText("Only the site's owner can delete it.").waitFor()
    expect(await page.getByRole('button', { name: 'Delete site' }).count()).toBe(0)

    // The Activity page tells it in a sentence.
    await page.goto(`${dashboard.origin}/dashboard/activity?action=site.ownership_transferred`)
    await page.getByText(`Made ${member.email} the owner of ${siteName} (${owner.email} became an admin)`).waitFor()
    expect(dashboard.pageErrors).toEqual([])
  }, 60_000)
})
