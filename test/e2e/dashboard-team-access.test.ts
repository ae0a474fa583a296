import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestAccount, randomEmail, type TestAccount } from '../helpers/dashboard-client.js'
import {
  addSessionCookie,
  expectNoAccessibilityViolations,
  hasChromium,
  launchBrowser,
  openDashboard,
  prepareScreenshotDirectory,
  saveScreenshot,
  watchPageErrors,
  type Browser,
  type OpenDashboard,
} from './dashboard-support.js'

const ownerEmail = randomEmail()
const ownerPassword = 'correct horse battery staple'
const viewerEmail = randomEmail()
const viewerPassword = 'another horse battery staple'
const siteName = 'Shared shop'
/** What the log-in and sign-up pages say while an invitation link waits in the tab. */
const invitationNotice =
  'You have been invited to a site on Tollgate. Log in or create an account to accept it. If the invitation was sent to your e-mail address, use that address: only its account can accept it.'

/**
 * Team access in Chromium, as two people live it: the owner invites by a link shown once, the
 * invitee (logged out, in a browser of their own) signs up on the way and lands back on the
 * invitation, joins as a viewer who reads and copies but is offered no change, and is shut out
 * once removed (a change of role confirmed first). An admin is offered all but deleting the site, and a link bound to another
 * address says so to whoever opens it, and lets them log out for the right account.
 */
describe.skipIf(!hasChromium())('sharing a site with teammates in the dashboard', () => {
  let dashboard: OpenDashboard
  /** The owner's page. */
  let owner: Page
  let viewerBrowser: Browser
  let viewer: Page
  let viewerErrors: string[]
  const browsers: Browser[] = []
  let siteId = ''
  let siteKey = ''

  beforeAll(async () => {
    ;[dashboard] = await Promise.all([openDashboard(), prepareScreenshotDirectory()])
    owner = dashboard.page
    viewerBrowser = await launchBrowser(dashboard.origin)
    browsers.push(viewerBrowser)
    viewer = await viewerBrowser.context.newPage()
    viewerErrors = watchPageErrors(viewer)
  }, 120_000)
  afterAll(async () => {
    await Promise.all(browsers.map((browser) => browser.close()))
    await dashboard?.close()
  })

  /** A browser of its own, logged in to `account` (its session cookie from the API's log-in). */
  async function openLoggedIn(account: TestAccount): Promise<Page> {
    const browser = await launchBrowser(dashboard.origin)
    browsers.push(browser)
    await addSessionCookie(browser.context, account, dashboard.origin)
    return browser.context.newPage()
  }

  async function openTab(page: Page, tab: string) {
    await page.getByRole('navigation', { name: 'Site sections' }).getByRole('link', { name: tab, exact: true }).click()
  }

  /** Invites from the owner's Members tab, and gives the link the page shows once. */
  async function invite(role: 'viewer' | 'admin', email = ''): Promise<string> {
    await owner.goto(`${dashboard.origin}/dashboard/sites/${siteId}/members`)
    const form = owner.locator('form').filter({ has: owner.getByRole('button', { name: 'Invite', exact: true }) })
    await form.getByLabel('Role', { exact: true }).selectOption(role)
    await form.getByLabel('Only for this e-mail address (optional)').fill(email)
    // An admin's link for anyone who holds it is warned of, beside the address that would bind it.
    const warning = owner.locator('#invite-open-admin')
    expect(await warning.count()).toBe(role === 'admin' && email === '' ? 1 : 0)
    if (role === 'admin' && email === '') {
      expect(await warning.textContent()).toMatch(/^Without an address, whoever holds the link .* can accept it and become an admin of Shared shop\. Enter the invitee's/)
      expect(await form.getByLabel('Only for this e-mail address (optional)').getAttribute('aria-describedby')).toBe('invite-open-admin')
    }
    await form.getByRole('button', { name: 'Invite', exact: true }).click()
    const link = (await owner.locator('.invitation-link').textContent()) ?? ''
    expect(link).toMatch(new RegExp(`^${dashboard.origin}/dashboard/invite#tgi_[\\w-]+$`))
    return link
  }

  it('lets the owner sign up, create a site and invite a viewer by a link shown once', async () => {
    await owner.goto(`${dashboard.origin}/dashboard/signup`)
    await owner.getByLabel('E-mail address').fill(ownerEmail)
    await owner.getByLabel('Password').fill(ownerPassword)
    await owner.getByRole('button', { name: 'Create account' }).click()
    await owner.getByRole('link', { name: 'Add your first site' }).click()
    await owner.getByLabel('Name').fill(siteName)
    await owner.getByRole('button', { name: 'Create site' }).click()
    await owner.getByRole('heading', { name: `${siteName} is ready` }).waitFor()
    siteKey = await owner.getByLabel('Site key', { exact: true }).inputValue()
    siteId = /\/dashboard\/sites\/([^/]+)\//.exec(new URL(owner.url()).pathname)?.[1] ?? ''
    expect(siteId).toMatch(/^[0-9a-f-]{36}$/)

    await owner.getByRole('link', { name: 'Continue to settings' }).click()
    await openTab(owner, 'Members')
    await owner.getByRole('heading', { name: 'Members', exact: true }).waitFor()
    // The owner's own row: its role, and nothing to remove or change.
    const ownerRow = owner.locator('tbody tr').filter({ hasText: ownerEmail })
    expect(await ownerRow.locator('td').nth(1).textContent()).toBe('owner')
    expect(await ownerRow.getByRole('button').count()).toBe(0)

    const link = await invite('viewer')
    await owner.locator('li').filter({ hasText: 'Anyone with the link as viewer' }).waitFor()
    // Its Revoke button says which invitation it revokes.
    await owner.getByRole('button', { name: /^Revoke the invitation for anyone with the link as viewer, expires \S/ }).waitFor()
    await expectNoAccessibilityViolations(owner, 'members with an invitation made')
    await saveScreenshot(owner, 'members-invitation')
    // Shown once: the tab opened again lists the invitation, not its link.
    await owner.reload()
    await owner.locator('li').filter({ hasText: 'Anyone with the link as viewer' }).waitFor()
    expect(await owner.locator('.invitation-link').count()).toBe(0)

    await viewer.goto(link)
    await viewer.getByRole('heading', { name: 'Log in' }).waitFor()
    await viewer.getByRole('status').filter({ hasText: invitationNotice }).waitFor()
    // The token left the address bar at once, kept in this tab for after the sign-up.
    expect(viewer.url()).toBe(`${dashboard.origin}/dashboard/invite`)
    expect(await viewer.evaluate(() => sessionStorage.getItem('tollgate:invitation'))).toBe(new URL(link).hash.slice(1))
  }, 90_000)

  it('brings the invitee back to the invitation after signing up, and joins them as a viewer', async () => {
    await viewer.getByRole('link', { name: 'Create an account' }).click()
    await viewer.getByRole('heading', { name: 'Create your account' }).waitFor()
    await viewer.getByRole('status').filter({ hasText: invitationNotice }).waitFor()
    await viewer.getByLabel('E-mail address').fill(viewerEmail)
    await viewer.getByLabel('Password').fill(viewerPassword)
    await viewer.getByRole('button', { name: 'Create account' }).click()
    await viewer.getByRole('heading', { name: 'Invitation' }).waitFor()
    expect(new URL(viewer.url()).pathname).toBe('/dashboard/invite')
    expect(new URL(viewer.url()).hash).toBe('')
    expect(await viewer.locator('.invitation-summary').textContent()).toBe(`Join ${siteName} as viewer, invited by ${ownerEmail}.`)
    // Which account would join, said before Accept.
    expect(await viewer.locator('.invitation-account').textContent()).toBe(`You are logged in as ${viewerEmail}.`)
    await expectNoAccessibilityViolations(viewer, 'invitation')
    await saveScreenshot(viewer, 'invitation')

    await viewer.getByRole('button', { name: 'Accept' }).click()
    await viewer.getByRole('heading', { name: siteName }).waitFor()
    // The site opens on its first tab, Analytics, whose address is the site's own.
    expect(new URL(viewer.url()).pathname).toBe(`/dashboard/sites/${siteId}`)
    await viewer.locator('.page-heading .badge').filter({ hasText: 'Shared with you: viewer' }).waitFor()
    // Used up: the token is gone from the tab too.
    expect(await viewer.evaluate(() => sessionStorage.getItem('tollgate:invitation'))).toBeNull()

    await viewer.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sites' }).click()
    await viewer.getByRole('heading', { name: `${siteName} shared with you: viewer` }).waitFor()
  }, 60_000)

  it("lets the viewer copy the site key and the snippet, and offers no change on any tab, saying why once", async () => {
    // A webhook URL set by the owner, which a viewer is told of but not shown.
    const webhookUrl = 'http://127.0.0.1:9/hooks/secret-path'
    await owner.goto(`${dashboard.origin}/dashboard/sites/${siteId}/webhook`)
    await owner.getByLabel('Webhook URL').fill(webhookUrl)
    await owner.getByLabel('Signing secret').fill('a signing secret of some length')
    await owner.getByRole('button', { name: 'Save webhook' }).click()
    await owner.getByRole('status').filter({ hasText: 'Webhook saved.' }).waitFor()

    const readAccessNote = viewer.locator('.notice').filter({ hasText: 'You have read access to this site' })
    for (const tab of ['analytics', 'log', 'settings', 'webhook', 'integration', 'members']) {
      await viewer.goto(`${dashboard.origin}/dashboard/sites/${siteId}/${tab}`)
      await viewer.getByRole('heading', { name: siteName }).waitFor()
      await readAccessNote.waitFor()
      expect(await readAccessNote.count(), `notes on the ${tab} tab`).toBe(1)
    }

    await viewer.goto(`${dashboard.origin}/dashboard/sites/${siteId}/integration`)
    expect(await viewer.getByLabel('Site key', { exact: true }).inputValue()).toBe(siteKey)
    await viewer.getByRole('button', { name: 'Copy site key' }).click()
    expect(await viewer.evaluate(() => navigator.clipboard.readText())).toBe(siteKey)
    const snippet = await viewer.getByLabel('Snippet', { exact: true }).inputValue()
    expect(snippet).toContain(`data-site-key="${siteKey}"`)
    await viewer.getByRole('button', { name: 'Copy snippet' }).click()
    expect(await viewer.evaluate(() => navigator.clipboard.readText())).toBe(snippet)
    for (const name of ['Rotate secret key', 'Stop the previous keys now', 'Delete site']) {
      expect(await viewer.getByRole('button', { name }).count(), name).toBe(0)
    }
    await expectNoAccessibilityViolations(viewer, "a viewer's keys and snippet")
    await saveScreenshot(viewer, 'viewer-keys')

    await openTab(viewer, 'Settings')
    await viewer.getByRole('heading', { name: 'Settings', exact: true }).waitFor()
    expect(await viewer.getByLabel('Name', { exact: true }).inputValue()).toBe(siteName)
    expect(await viewer.getByLabel('Name', { exact: true }).isDisabled()).toBe(true)
    expect(await viewer.getByLabel('Block threshold').isDisabled()).toBe(true)
    expect(await viewer.getByRole('button', { name: 'Save settings' }).isDisabled()).toBe(true)
    await expectNoAccessibilityViolations(viewer, "a viewer's settings")

    await openTab(viewer, 'Webhook')
    await viewer.getByRole('heading', { name: 'Recent deliveries' }).waitFor()
    await viewer.getByText('A webhook URL is set (hidden from viewers).').waitFor()
    expect(await viewer.getByLabel('Webhook URL').count()).toBe(0)
    expect(await viewer.getByText(webhookUrl).count()).toBe(0)
    expect(await viewer.getByRole('button', { name: 'Save webhook' }).isDisabled()).toBe(true)
    expect(await viewer.getByRole('button', { name: 'Generate' }).isDisabled()).toBe(true)
    expect(await viewer.getByRole('button', { name: 'Send test event' }).count()).toBe(0)
    // Reading the deliveries again is no change.
    expect(await viewer.getByRole('button', { name: 'Refresh' }).isEnabled()).toBe(true)
    await expectNoAccessibilityViolations(viewer, "a viewer's webhook")

    await openTab(viewer, 'Members')
    await viewer.locator('tbody tr').filter({ hasText: ownerEmail }).waitFor()
    expect(await viewer.getByRole('button', { name: 'Invite', exact: true }).count()).toBe(0)
    expect(await viewer.getByRole('button', { name: /^Remove / }).count()).toBe(0)
    expect(await viewer.getByRole('combobox').count()).toBe(0)
    expect(await viewer.getByRole('button', { name: 'Leave this site' }).isEnabled()).toBe(true)
    await expectNoAccessibilityViolations(viewer, "a viewer's members")
    expect(viewerErrors).toEqual([])
  }, 90_000)

  it('lists the viewer in the owner\'s Members tab; once removed, the viewer\'s reload finds the site gone', async () => {
    await owner.goto(`${dashboard.origin}/dashboard/sites/${siteId}/members`)
    const viewerRow = owner.locator('tbody tr').filter({ hasText: viewerEmail })
    const roleSelect = viewerRow.getByLabel(`Role of ${viewerEmail}`)
    expect(await roleSelect.inputValue()).toBe('viewer')
    // A role chosen is not a role saved: Save role appears for it, and goes when the choice is undone.
    await roleSelect.selectOption('admin')
    const saveRole = viewerRow.getByRole('button', { name: `Save role for ${viewerEmail}: admin` })
    await saveRole.waitFor()
    await roleSelect.selectOption('viewer')
    await saveRole.waitFor({ state: 'detached' })
    // Saved, it is confirmed first, naming the member and the role; Cancel keeps the role saved.
    await roleSelect.selectOption('admin')
    await saveRole.click()
    const roleDialog = owner.getByRole('dialog', { name: "Change this member's role?" })
    await roleDialog.getByText(`${viewerEmail} becomes an admin of ${siteName}`).waitFor()
    await roleDialog.getByRole('button', { name: 'Cancel' }).click()
    await roleDialog.waitFor({ state: 'hidden' })
    await saveRole.waitFor({ state: 'detached' })
    expect(await roleSelect.inputValue()).toBe('viewer')

    // Removing is confirmed first; Cancel keeps the member.
    const removeDialog = owner.getByRole('dialog', { name: 'Remove this member?' })
    await viewerRow.getByRole('button', { name: `Remove ${viewerEmail}` }).click()
    await removeDialog.getByText(viewerEmail).waitFor()
    await expectNoAccessibilityViolations(owner, 'removing a member')
    await removeDialog.getByRole('button', { name: 'Cancel' }).click()
    await removeDialog.waitFor({ state: 'hidden' })
    await owner.reload()
    await viewerRow.waitFor()
    await viewerRow.getByRole('button', { name: `Remove ${viewerEmail}` }).click()
    await removeDialog.getByRole('button', { name: 'Remove member' }).click()
    await viewerRow.waitFor({ state: 'detached' })

    await viewer.reload()
    await viewer.getByRole('alert').filter({ hasText: 'There is no site with this id in your account or shared with it.' }).waitFor()
    await viewer.getByRole('link', { name: 'Back to your sites' }).click()
    await viewer.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    expect(await viewer.getByText(siteName).count()).toBe(0)
  }, 60_000)

  it('offers an admin the secret key changes but not deleting the site', async () => {
    const link = await invite('admin')
    const admin = await openLoggedIn(await createTestAccount(dashboard.service.app))
    await admin.goto(link)
    await admin.locator('.invitation-summary').filter({ hasText: `Join ${siteName} as admin, invited by ${ownerEmail}.` }).waitFor()
    await admin.getByRole('button', { name: 'Accept' }).click()
    await admin.locator('.page-heading .badge').filter({ hasText: 'Shared with you: admin' }).waitFor()
    expect(await admin.getByText('You have read access to this site').count()).toBe(0)

    await openTab(admin, 'Keys and snippet')
    await admin.getByRole('button', { name: 'Rotate secret key' }).waitFor()
    await admin.getByText("Only the site's owner can delete it.").waitFor()
    expect(await admin.getByRole('button', { name: 'Delete site' }).count()).toBe(0)
    await expectNoAccessibilityViolations(admin, "an admin's keys and snippet")
    // The owner still has it.
    await owner.goto(`${dashboard.origin}/dashboard/sites/${siteId}/integration`)
    await owner.getByRole('button', { name: 'Delete site' }).waitFor()

    // An admin making themself a viewer confirms it, and the tab then stops offering what a viewer cannot do.
    await openTab(admin, 'Members')
    const adminRow = admin.locator('tbody tr').filter({ has: admin.getByRole('button', { name: 'Leave this site' }) })
    const adminEmail = (await adminRow.locator('td').first().textContent()) ?? ''
    await adminRow.getByLabel(`Role of ${adminEmail}`).selectOption('viewer')
    await adminRow.getByRole('button', { name: `Save role for ${adminEmail}: viewer` }).click()
    const demoteDialog = admin.getByRole('dialog', { name: 'Make yourself a viewer?' })
    await demoteDialog.getByRole('button', { name: 'Make me a viewer' }).click()
    await admin.locator('.page-heading .badge').filter({ hasText: 'Shared with you: viewer' }).waitFor()
    await admin.locator('.notice').filter({ hasText: 'You have read access to this site' }).waitFor()
    expect(await admin.getByRole('button', { name: 'Invite', exact: true }).count()).toBe(0)
    expect(await admin.getByRole('combobox').count()).toBe(0)
    expect(await admin.getByRole('button', { name: /^Remove / }).count()).toBe(0)
  }, 60_000)

  it('tells an account that opens a link bound to another address, and lets it log out for the right one', async () => {
    const [stranger, invitee] = await Promise.all([createTestAccount(dashboard.service.app), createTestAccount(dashboard.service.app)])
    const link = await invite('viewer', invitee.email)
    const page = await openLoggedIn(stranger)
    await page.goto(link)
    await page.getByRole('heading', { name: 'Invitation' }).waitFor()
    await page.getByRole('status').filter({ hasText: 'This invitation is for another account' }).waitFor()
    expect(await page.locator('.invitation-account').textContent()).toBe(`You are logged in as ${stranger.email}.`)
    // Whoever holds a forwarded link is not told whose address the inviter typed, nor offered an Accept that cannot work.
    expect(await page.locator('body').textContent()).not.toContain(invitee.email)
    expect(await page.getByRole('button', { name: 'Accept' }).count()).toBe(0)
    await expectNoAccessibilityViolations(page, 'an invitation for another address')
    await saveScreenshot(page, 'invitation-other-address')

    await page.getByRole('button', { name: 'Log out and use another account' }).click()
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await page.getByLabel('E-mail address').fill(invitee.email)
    await page.getByLabel('Password').fill(invitee.password)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.locator('.invitation-summary').filter({ hasText: `Join ${siteName} as viewer` }).waitFor()
    expect(await page.locator('.invitation-account').textContent()).toBe(`You are logged in as ${invitee.email}.`)
    await page.getByText(`It is for your address, ${invitee.email}: only this account can accept it.`).waitFor()
    expect(await page.getByText('This invitation is for another account').count()).toBe(0)
    await page.getByRole('button', { name: 'Accept' }).click()
    await page.locator('.page-heading .badge').filter({ hasText: 'Shared with you: viewer' }).waitFor()
  }, 60_000)

  it('tells someone logged out who opens a link bound to their address that an invitation waits, and lets them log in and accept it', async () => {
    const invitee = await createTestAccount(dashboard.service.app)
    const link = await invite('admin', invitee.email)
    const browser = await launchBrowser(dashboard.origin)
    browsers.push(browser)
    const page = await browser.context.newPage()
    await page.goto(link)
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await page.getByRole('status').filter({ hasText: invitationNotice }).waitFor()
    await expectNoAccessibilityViolations(page, 'log-in with an invitation waiting')
    await saveScreenshot(page, 'log-in-invitation-waiting')

    await page.getByLabel('E-mail address').fill(invitee.email)
    await page.getByLabel('Password').fill(invitee.password)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.locator('.invitation-summary').filter({ hasText: `Join ${siteName} as admin, invited by ${ownerEmail}.` }).waitFor()
    await page.getByRole('button', { name: 'Accept' }).click()
    await page.locator('.page-heading .badge').filter({ hasText: 'Shared with you: admin' }).waitFor()
  }, 60_000)

  it('takes a second invitation link opened on the invitation page, out of the address bar, and shows it', async () => {
    const [first, second] = [await invite('viewer'), await invite('admin')]
    const page = await openLoggedIn(await createTestAccount(dashboard.service.app))
    await page.goto(first)
    await page.locator('.invitation-summary').filter({ hasText: `Join ${siteName} as viewer` }).waitFor()
    // Only the hash changes: no page load, a hashchange.
    await page.evaluate((link) => {
      window.location.href = link
    }, second)
    await page.locator('.invitation-summary').filter({ hasText: `Join ${siteName} as admin` }).waitFor()
    expect(page.url()).toBe(`${dashboard.origin}/dashboard/invite`)
    expect(await page.evaluate(() => sessionStorage.getItem('tollgate:invitation'))).toBe(new URL(second).hash.slice(1))
  }, 60_000)

  it('confirms revoking an invitation, and a dead link leaves the tab with a way out instead of coming back at every log-in', async () => {
    const boundTo = randomEmail()
    const link = await invite('viewer', boundTo)
    const revokeButton = owner.getByRole('button', { name: `Revoke the invitation for ${boundTo} as viewer, expires ` })
    const revokeDialog = owner.getByRole('dialog', { name: 'Revoke this invitation?' })
    await revokeButton.click()
    await revokeDialog.getByText(`The link for ${boundTo} as viewer stops working at once`).waitFor()
    await revokeDialog.getByRole('button', { name: 'Cancel' }).click()
    await revokeDialog.waitFor({ state: 'hidden' })
    expect(await revokeButton.count()).toBe(1)
    await revokeButton.click()
    await revokeDialog.getByRole('button', { name: 'Revoke invitation' }).click()
    await revokeButton.waitFor({ state: 'detached' })

    const account = await createTestAccount(dashboard.service.app)
    const page = await openLoggedIn(account)
    await page.goto(link)
    await page.getByRole('alert').filter({ hasText: 'This invitation is unknown, expired, revoked or used already' }).waitFor()
    await expect.poll(() => page.evaluate(() => sessionStorage.getItem('tollgate:invitation'))).toBeNull()
    await expectNoAccessibilityViolations(page, 'a dead invitation link')
    await page.getByRole('link', { name: 'Go to your sites' }).click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()

    // A later log-in in this tab opens the sites, not the dead invitation, and says none waits.
    await page.getByRole('button', { name: 'Log out' }).click()
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    expect(await page.getByText('You have been invited').count()).toBe(0)
    await page.getByLabel('E-mail address').fill(account.email)
    await page.getByLabel('Password').fill(account.password)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    expect(new URL(page.url()).pathname).not.toBe('/dashboard/invite')
  }, 60_000)
})
