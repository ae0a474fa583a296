import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite } from '../helpers/site-sharing.js'
import { authenticatorApp, enableTwoFactor } from '../helpers/two-factor.js'
import { expectNoAccessibilityViolations, focusedId, hasChromium, openLoggedInDashboard, prepareScreenshotDirectory, saveScreenshot, type OpenDashboard } from './dashboard-support.js'

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

/**
 * An owner with two-factor authentication on, in Chromium: "Make owner" asks for a code besides
 * the password. A wrong code is said beside its field and hands nothing over; the dialog stays
 * open with the password kept and the code emptied and focused for the next, as the Account
 * page's forms do; the authenticator app's code then makes the member the owner.
 */
describe.skipIf(!hasChromium())('handing a site over in the dashboard with two-factor authentication on', () => {
  const CODE_LABEL = 'Authentication or recovery code'
  let dashboard: OpenDashboard
  let page: Page
  let owner: TestAccount
  let member: TestAccount
  let authenticator: ReturnType<typeof authenticatorApp>
  let siteId = ''

  beforeAll(async () => {
    ;({ dashboard, account: owner } = await openLoggedInDashboard())
    page = dashboard.page
    const app = dashboard.service.app
    siteId = (await createTestSite(app, owner, { name: siteName })).id
    member = await createTestAccount(app)
    await shareSite(app, owner, member, siteId, 'admin')
    const { secret } = await enableTwoFactor(app, owner)
    // The code that turned it on was taken: the app's next one is of a later step.
    authenticator = authenticatorApp(secret, Date.now())
  }, 120_000)
  afterAll(() => dashboard?.close())

  const roleOf = async (account: TestAccount) =>
    (await dashboard.service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}`, headers: asBrowser(account) })).json<{ role: string }>().role

  it('asks for a code: a wrong one is said beside its field and leaves the dialog open, the password kept; the app\'s code makes the member the owner', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${siteId}/members`)
    const memberRow = page.locator('tbody tr').filter({ hasText: member.email })
    await memberRow.getByRole('button', { name: `Make owner ${member.email}` }).click()
    const dialog = page.getByRole('dialog', { name: 'Make this member the owner?' })
    await dialog.getByText('Enter your password and a code to confirm.').waitFor()
    const passwordField = dialog.getByLabel('Password', { exact: true })
    const codeField = dialog.getByLabel(CODE_LABEL)

    await passwordField.fill(owner.password)
    await codeField.fill(authenticator.wrongCode())
    await dialog.getByRole('button', { name: 'Make owner' }).click()
    await dialog.locator('#transfer-code-error').filter({ hasText: "is not the authenticator app's current code, nor an unused recovery code" }).waitFor()
    expect(await codeField.getAttribute('aria-invalid')).toBe('true')
    // The code is emptied and focused for the next; the password, which was right, stays.
    expect(await codeField.inputValue()).toBe('')
    await expect.poll(() => focusedId(page)).toBe('transfer-code')
    expect(await passwordField.inputValue()).toBe(owner.password)
    expect(await passwordField.getAttribute('aria-invalid')).toBeNull()
    expect(await roleOf(owner)).toBe('owner')
    await expectNoAccessibilityViolations(page, 'making a member the owner with a wrong code')

    await codeField.fill(await authenticator.code())
    await codeField.press('Enter')
    await dialog.waitFor({ state: 'hidden' })
    // The list shows the member as the owner, and the account as an admin.
    await memberRow.locator('td').nth(1).filter({ hasText: /^owner$/ }).waitFor()
    await page.getByLabel(`Role of ${owner.email}`).waitFor()
    expect(await page.getByLabel(`Role of ${owner.email}`).inputValue()).toBe('admin')
    expect(await roleOf(member)).toBe('owner')
    expect(await roleOf(owner)).toBe('admin')
    expect(dashboard.pageErrors).toEqual([])
  }, 90_000)
})
