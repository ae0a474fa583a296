import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestAccount, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite } from '../helpers/site-sharing.js'
import { enableTwoFactor } from '../helpers/two-factor.js'
import {
  addSessionCookie,
  expectNoAccessibilityViolations,
  hasChromium,
  launchBrowser,
  openLoggedInDashboardWithSite,
  prepareScreenshotDirectory,
  saveScreenshot,
  watchPageErrors,
  type Browser,
  type OpenDashboard,
} from './dashboard-support.js'

/**
 * An owner requiring two-factor authentication of a site's members, from the Members tab, and a
 * viewer without it, in a browser of their own: told on the sites page which site is closed to
 * them and why, and refused the site itself with the way in.
 */
describe.skipIf(!hasChromium())("a site's requirement of two-factor authentication in the dashboard", () => {
  let dashboard: OpenDashboard
  let owner: Page
  let site: CreatedSite
  let viewerAccount: TestAccount
  let viewerBrowser: Browser
  let ownerAccount: TestAccount
  let ownersRecoveryCodes: string[]

  beforeAll(async () => {
    const [opened] = await Promise.all([openLoggedInDashboardWithSite({ name: 'Guarded shop' }), prepareScreenshotDirectory()])
    ;({ dashboard, site } = opened)
    ownerAccount = opened.account
    owner = dashboard.page
    ;({ recoveryCodes: ownersRecoveryCodes } = await enableTwoFactor(dashboard.service.app, ownerAccount))
    viewerAccount = await createTestAccount(dashboard.service.app)
    await shareSite(dashboard.service.app, ownerAccount, viewerAccount, site.id, 'viewer')
    viewerBrowser = await launchBrowser(dashboard.origin)
    await addSessionCookie(viewerBrowser.context, viewerAccount, dashboard.origin)
  }, 120_000)
  afterAll(async () => {
    await viewerBrowser?.close()
    await dashboard?.close()
  })

  it("lets the owner require it, shows who is without it, and shuts the viewer out with the way back in", async () => {
    await owner.goto(`${dashboard.origin}/dashboard/sites/${site.id}/members`)
    const table = owner.getByRole('table')
    await table.getByRole('columnheader', { name: 'Two-factor' }).waitFor()
    const viewerRow = table.getByRole('row').filter({ hasText: viewerAccount.email })
    expect(await viewerRow.getByRole('cell').nth(2).textContent()).toBe('off')
    expect(await owner.getByText(`Without two-factor: ${viewerAccount.email}.`).count()).toBe(1)

    await owner.getByRole('button', { name: 'Require two-factor of members' }).click()
    await owner.getByText('Members reach this site only with two-factor authentication on their accounts').waitFor()
    await owner.getByRole('button', { name: 'Stop requiring two-factor of members' }).waitFor()
    expect(await viewerRow.getByRole('cell').nth(2).textContent()).toBe('off (shut out)')
    expect((await dashboard.service.app.sites.findById(site.id))?.settings.requireTwoFactor).toBe(true)
    await expectNoAccessibilityViolations(owner, 'members of a site that requires two-factor')
    await saveScreenshot(owner, 'members-two-factor')

    const viewer = await viewerBrowser.context.newPage()
    const viewerErrors = watchPageErrors(viewer)
    await viewer.goto(`${dashboard.origin}/dashboard/`)
    await viewer.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    const notice = viewer.locator('.notice--warning').filter({ hasText: 'closed until you turn on two-factor authentication' })
    await notice.waitFor()
    expect(await notice.textContent()).toContain('A site shared with you is closed until you turn on two-factor authentication: Guarded shop.')
    expect(await notice.getByRole('link', { name: 'Turn on two-factor authentication' }).getAttribute('href')).toBe('/dashboard/account')
    expect(await viewer.getByRole('link', { name: 'Guarded shop' }).count()).toBe(0)
    await expectNoAccessibilityViolations(viewer, 'sites with one closed until two-factor is on')
    await saveScreenshot(viewer, 'sites-closed-until-two-factor')

    await viewer.goto(`${dashboard.origin}/dashboard/sites/${site.id}/analytics`)
    await viewer.getByText("This site's owner requires two-factor authentication of its members").waitFor()
    expect(viewerErrors).toEqual([])
    expect(dashboard.pageErrors).toEqual([])
  })

  it('says in the Make owner dialog that a member without two-factor cannot own the site, and shows the refusal', async () => {
    // The site requires it since the case above.
    await owner.goto(`${dashboard.origin}/dashboard/sites/${site.id}/members`)
    await owner.getByRole('button', { name: `Make owner ${viewerAccount.email}` }).click()
    const dialog = owner.getByRole('dialog', { name: 'Make this member the owner?' })
    await dialog.getByText(`${viewerAccount.email} has two-factor authentication off`).waitFor()
    await dialog.getByLabel('Password').fill(ownerAccount.password)
    await dialog.getByRole('textbox', { name: /code/i }).fill(ownersRecoveryCodes[0]!)
    await dialog.getByRole('button', { name: 'Make owner' }).click()
    await dialog.getByRole('alert').filter({ hasText: `${viewerAccount.email} has it off: they must turn it on before they can own the site.` }).waitFor()
    expect((await dashboard.service.app.sites.findById(site.id))?.accountId).toBe(ownerAccount.id)
    await expectNoAccessibilityViolations(owner, 'making a member without two-factor the owner')
    expect(dashboard.pageErrors).toEqual([])
  })
})
