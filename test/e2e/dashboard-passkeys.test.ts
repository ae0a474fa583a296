import type { CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectNoAccessibilityViolations, hasChromium, openDashboard, prepareScreenshotDirectory, saveScreenshot, signUpInDashboard, type OpenDashboard } from './dashboard-support.js'

/**
 * Passkeys in Chromium, with its virtual authenticator (the DevTools protocol's WebAuthn domain: a
 * platform authenticator that keeps discoverable credentials and verifies its user): one added
 * on the Account page, then a log-in with it from the log-in page, without the password. The
 * dashboard is opened at http://localhost:<port>, since browsers refuse an IP address as a
 * passkey's domain (the page offers no passkeys at http://127.0.0.1).
 */
describe.skipIf(!hasChromium())('passkeys in the dashboard', () => {
  const email = `passkeys-${Date.now()}@example.com`
  const password = 'correct horse battery staple'
  let dashboard: OpenDashboard
  let page: Page
  let origin: string
  let devtools: CDPSession
  let authenticatorId: string
  /** How many credentials the virtual authenticator holds: one per browser prompt that made one. */
  const heldCredentials = async () => (await devtools.send('WebAuthn.getCredentials', { authenticatorId })).credentials.length

  beforeAll(async () => {
    ;[dashboard] = await Promise.all([openDashboard(), prepareScreenshotDirectory()])
    page = dashboard.page
    origin = dashboard.origin.replace('127.0.0.1', 'localhost')
    devtools = await page.context().newCDPSession(page)
    await devtools.send('WebAuthn.enable')
    ;({ authenticatorId } = await devtools.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }))
  }, 120_000)
  afterAll(() => dashboard?.close())

  const section = () => page.locator('section[aria-labelledby="passkeys-heading"]')

  it('adds a passkey on the Account page after the password', async () => {
    await signUpInDashboard(page, origin, { email, password })
    await page.getByRole('link', { name: 'Account', exact: true }).click()
    await section().getByText('No passkeys yet.').waitFor()

    // A blank name is said before the browser's prompt: the authenticator makes no credential.
    await section().getByLabel('Name', { exact: true }).fill('   ')
    await section().getByLabel('Current password').fill(password)
    await section().getByRole('button', { name: 'Add passkey' }).click()
    await section().locator('#passkey-name-error').waitFor()
    expect(await heldCredentials()).toBe(0)

    // A wrong password is said beside its field, and adds nothing.
    await section().getByLabel('Name', { exact: true }).fill('This laptop')
    await section().getByLabel('Current password').fill('not the password')
    await section().getByRole('button', { name: 'Add passkey' }).click()
    await section().locator('#passkey-password-error').waitFor()
    expect(await section().getByLabel('Current password').getAttribute('aria-invalid')).toBe('true')
    expect(await heldCredentials()).toBe(1)

    // The browser's answer is sent again with the right password, not a second prompt: the
    // authenticator holds one credential, the one added.
    await section().getByLabel('Current password').fill(password)
    await section().getByRole('button', { name: 'Add passkey' }).click()
    await section().getByText('Passkey This laptop added.').waitFor()
    expect(await heldCredentials()).toBe(1)
    const row = section().getByRole('row', { name: /This laptop/ })
    await row.waitFor()
    expect(await row.getByRole('cell').nth(1).textContent()).toBe('Never')
    await expectNoAccessibilityViolations(page, 'passkeys')
    await saveScreenshot(page, 'passkeys')
  })

  it('logs in with the passkey from the log-in page, without the password', async () => {
    await page.getByRole('button', { name: 'Log out', exact: true }).click()
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await expectNoAccessibilityViolations(page, 'log-in with a passkey')
    await page.getByRole('button', { name: 'Log in with a passkey' }).click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()

    await page.getByRole('link', { name: 'Account', exact: true }).click()
    const row = section().getByRole('row', { name: /This laptop/ })
    await row.waitFor()
    await expect.poll(() => row.getByRole('cell').nth(1).textContent()).not.toBe('Never')
  })

  it('renames the passkey, and removes it after a confirmation with the password: it logs in no more, and its sessions end', async () => {
    await section().getByRole('button', { name: 'Rename passkey This laptop' }).click()
    const renaming = page.getByRole('dialog', { name: 'Rename passkey This laptop' })
    await renaming.getByLabel('New name').fill('Work laptop')
    await renaming.getByRole('button', { name: 'Save name' }).click()
    await section().getByText('Passkey renamed to Work laptop.').waitFor()

    await section().getByRole('button', { name: 'Remove passkey Work laptop' }).click()
    const removal = page.getByRole('dialog', { name: 'Remove passkey Work laptop?' })
    await removal.getByText('the sessions it logged in').waitFor()
    await removal.getByLabel('Password').fill(password)
    await removal.getByRole('button', { name: 'Remove passkey' }).click()
    // This session was opened with the passkey: it ends with it, and the page asks for a log-in.
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await page.getByRole('button', { name: 'Log in with a passkey' }).click()
    // The authenticator still holds the credential; the server no longer knows it.
    await page.getByText('No account here has this passkey').waitFor()
    expect(dashboard.pageErrors).toEqual([])
  })
})
