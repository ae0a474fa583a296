import { readFile } from 'node:fs/promises'
import type { Page } from 'playwright-core'
import { encode } from 'uqr'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { qrCodePath } from '../../dashboard/src/lib/qr-code.js'
import { asBrowser, createTestAccount, type TestAccount } from '../helpers/dashboard-client.js'
import { authenticatorApp, authenticatorCode, enableTwoFactor, logInElsewhere } from '../helpers/two-factor.js'
import { expectNoAccessibilityViolations, focusedId, hasChromium, openDashboard, prepareScreenshotDirectory, saveScreenshot, signUpInDashboard, type OpenDashboard } from './dashboard-support.js'

/**
 * Two-factor authentication in Chromium, as its owner meets it: turned on from the Account page
 * with the key the page shows, then the log-in's second step with an authenticator code and with
 * a recovery code. Every attempt here spends the budget of log-ins of one account from one client
 * (10 in 10 minutes), which passwords given to turn two-factor on count against too: the rest is
 * in the suite after this one, on a server of its own.
 */
describe.skipIf(!hasChromium())('turning two-factor authentication on, and logging in with it', () => {
  const email = `two-factor-${Date.now()}@example.com`
  const password = 'correct horse battery staple'
  let dashboard: OpenDashboard
  let page: Page
  let app: ReturnType<typeof authenticatorApp>
  let recoveryCodes: string[] = []

  beforeAll(async () => {
    ;[dashboard] = await Promise.all([openDashboard(), prepareScreenshotDirectory()])
    page = dashboard.page
  }, 120_000)
  afterAll(() => dashboard?.close())

  async function logOut() {
    await page.getByRole('button', { name: 'Log out', exact: true }).click()
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
  }

  /** The log-in's first step: the password is right, so the second step asks for the code. */
  async function logInWithPassword() {
    await page.getByLabel('E-mail address').fill(email)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByLabel('Authentication code').waitFor()
  }

  it("turns two-factor on from the Account page, with the QR code's key and its first code, and shows the recovery codes once", async () => {
    const { origin } = dashboard
    await signUpInDashboard(page, origin, { email, password })
    await page.getByRole('link', { name: 'Account', exact: true }).click()
    const section = page.locator('section[aria-labelledby="two-factor-heading"]')
    await section.getByText('Off. With two-factor authentication on').waitFor()

    const setupAnswer = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/me/two-factor/setup')
    await section.getByRole('button', { name: 'Turn on', exact: true }).click()
    const setup = (await (await setupAnswer).json()) as { secret: string; otpauthUri: string }
    await section.getByRole('heading', { name: '1. Add Tollgate to your authenticator app' }).waitFor()
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('1. Add Tollgate to your authenticator app')
    // The QR code holds the URI the server gave, drawn module for module.
    const qrCode = section.getByRole('img', { name: /^QR code for your authenticator app/ })
    expect(await qrCode.locator('path').getAttribute('d')).toBe(qrCodePath(encode(setup.otpauthUri, { ecc: 'M', border: 0 }).data))
    expect(new URL(setup.otpauthUri).searchParams.get('secret')).toBe(setup.secret)
    // The key to type in by hand is shown in groups of four; its copy button copies it whole.
    const shownKey = await section.getByLabel('Setup key').inputValue()
    expect(shownKey).toMatch(/^([A-Z2-7]{4} )+[A-Z2-7]{1,4}$/)
    expect(shownKey.replaceAll(' ', '')).toBe(setup.secret)
    await section.getByRole('button', { name: 'Copy setup key' }).click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(setup.secret)
    app = authenticatorApp(shownKey.replaceAll(' ', ''))
    await expectNoAccessibilityViolations(page, 'two-factor setup')
    await saveScreenshot(page, 'two-factor-setup')

    await section.getByLabel('Authentication code').fill(app.wrongCode())
    await section.getByLabel('Current password').fill(password)
    await section.getByRole('button', { name: 'Turn on two-factor authentication' }).click()
    await section.locator('#two-factor-setup-code-error').waitFor()
    expect(await section.getByLabel('Authentication code').getAttribute('aria-invalid')).toBe('true')
    await expect.poll(() => focusedId(page)).toBe('two-factor-setup-code')
    await section.getByLabel('Authentication code').fill(await app.code())
    await section.getByRole('button', { name: 'Turn on two-factor authentication' }).click()

    await section.getByRole('heading', { name: 'Your recovery codes' }).waitFor()
    await expect.poll(() => focusedId(page)).toBe('recovery-codes-heading')
    await section.getByText('Two-factor authentication is on').waitFor()
    recoveryCodes = await section.locator('.recovery-codes__list li').allTextContents()
    expect(recoveryCodes).toHaveLength(10)
    expect(new Set(recoveryCodes).size).toBe(10)
    for (const code of recoveryCodes) expect(code).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}$/)
    await section.getByRole('button', { name: 'Copy recovery codes' }).click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(recoveryCodes.join('\n'))
    // A text file made in the browser: the page's Content-Security-Policy lets it be downloaded.
    const download = page.waitForEvent('download')
    await section.getByRole('link', { name: 'Download the recovery codes as a text file' }).click()
    // Named by the server's host and the day (UTC) the codes were made.
    const host = new URL(dashboard.origin).hostname.replace(/\./g, '\\.')
    expect((await download).suggestedFilename()).toMatch(new RegExp(`^tollgate-recovery-codes-${host}-\\d{4}-\\d{2}-\\d{2}\\.txt$`))
    const file = await readFile(await (await download).path(), 'utf8')
    expect(file).toContain(`Tollgate recovery codes for ${email} at ${origin}`)
    expect(file).toContain(`\n\n${recoveryCodes.join('\n')}\n`)
    await expectNoAccessibilityViolations(page, 'recovery codes')

    await section.getByRole('button', { name: 'I have saved them' }).click()
    expect(await section.locator('.recovery-codes__list').count()).toBe(0)
    // The button went with the codes: the keyboard goes back to the section's heading.
    await expect.poll(() => focusedId(page)).toBe('two-factor-heading')
    await section.getByText(/^On since /).waitFor()
    expect(await section.locator('.two-factor-facts').textContent()).toMatch(/Recovery codes left\s*10$/)
  }, 90_000)

  it('asks for the authenticator code after the password, says so beside the field when it is wrong, and logs in with the right one', async () => {
    await logOut()
    await logInWithPassword()
    const field = page.getByLabel('Authentication code')
    await expect.poll(() => focusedId(page)).toBe('auth-code')
    expect(await field.getAttribute('autocomplete')).toBe('one-time-code')
    expect(await field.getAttribute('inputmode')).toBe('numeric')
    expect(await page.getByLabel('Password').count()).toBe(0)
    await field.fill(app.wrongCode())
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.locator('#auth-code-error').filter({ hasText: 'This is not the code your authenticator app shows now, or it was used already' }).waitFor()
    expect(await field.getAttribute('aria-invalid')).toBe('true')
    await expect.poll(() => focusedId(page)).toBe('auth-code')
    await expectNoAccessibilityViolations(page, 'log-in with a wrong authentication code')
    await saveScreenshot(page, 'two-factor-login')
    // The password the second step sends again is kept in the page's memory only.
    expect(new URL(page.url()).search).toBe('')
    expect(await page.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0)

    await field.fill(await app.code())
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
  }, 90_000)

  it('goes back to the e-mail address and password, and logs in with a recovery code instead, once', async () => {
    await logOut()
    await logInWithPassword()
    await page.getByRole('button', { name: 'Back to e-mail and password' }).click()
    await page.getByLabel('Password').waitFor()
    await expect.poll(() => focusedId(page)).toBe('auth-email')
    expect(await page.getByLabel('E-mail address').inputValue()).toBe(email)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByLabel('Authentication code').waitFor()

    await page.getByRole('button', { name: 'Use a recovery code instead' }).click()
    const field = page.getByLabel('Recovery code')
    await field.waitFor()
    expect(await page.getByLabel('Authentication code').count()).toBe(0)
    await expect.poll(() => focusedId(page)).toBe('auth-code')
    expect(await field.getAttribute('inputmode')).toBe('text')
    await expectNoAccessibilityViolations(page, 'log-in with a recovery code')
    const [used = ''] = recoveryCodes
    // As someone types it from paper: in capitals, without the dashes.
    await field.fill(` ${used.toUpperCase().replaceAll('-', ' ')} `)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    await page.getByRole('link', { name: 'Account', exact: true }).click()
    await page.locator('.two-factor-facts').filter({ hasText: /Recovery codes left\s*9$/ }).waitFor()
    expect(await logInElsewhere(dashboard.service.app, { email, password }, used)).toMatchObject({ status: 401, error: 'two_factor_invalid' })
    expect(dashboard.pageErrors).toEqual([])
  }, 60_000)
})

/**
 * The Account page of an account whose two-factor authentication is on (turned on through the
 * API): the warning when few recovery codes are left, new codes, turning it off, and the
 * Activity page's sentences for it all.
 */
describe.skipIf(!hasChromium())('the Account page with two-factor authentication on', () => {
  let dashboard: OpenDashboard
  let page: Page
  let account: TestAccount
  let secret = ''
  let recoveryCodes: string[] = []
  /** The owner's device cookies (the password's and the second factor's), which the browser holds too. */
  let deviceCookie = ''

  beforeAll(async () => {
    dashboard = await openDashboard()
    page = dashboard.page
    const { app } = dashboard.service
    account = await createTestAccount(app)
    ;({ secret, recoveryCodes } = await enableTwoFactor(app, account))
    // The browser logs in with the first recovery code (the authenticator's code of this step is
    // taken), and keeps the session and the known-device cookies.
    const logIn = await logInElsewhere(app, account, recoveryCodes[0])
    expect(logIn.status).toBe(200)
    await page.context().addCookies(logIn.cookies.map(({ name, value }) => ({ name, value, url: dashboard.origin })))
    deviceCookie = logIn.cookies
      // The known browser's and the second factor's: the latter spares the account's code budget.
      .filter(({ name }) => /tollgate_device(_2fa)?$/.test(name))
      .map(({ name, value }) => `${name}=${value}`)
      .join('; ')
    expect(deviceCookie).toMatch(/tollgate_device_2fa=/)
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('warns when two recovery codes or fewer are left, and makes new ones after the password and a code, the old ones then refused', async () => {
    const { app } = dashboard.service
    // A wrong code after the right password, which the audit log counts once an hour.
    expect(await logInElsewhere(app, account, authenticatorApp(secret).wrongCode(), deviceCookie)).toMatchObject({ status: 401, error: 'two_factor_invalid' })
    // Seven more log-ins with recovery codes leave two.
    for (const code of recoveryCodes.slice(1, 8)) expect(await logInElsewhere(app, account, code, deviceCookie)).toMatchObject({ status: 200 })
    await page.goto(`${dashboard.origin}/dashboard/account`)
    const section = page.locator('section[aria-labelledby="two-factor-heading"]')
    await section.getByText('Only 2 recovery codes are left.').waitFor()
    await section.locator('.two-factor-facts').filter({ hasText: /Recovery codes left\s*2$/ }).waitFor()

    await section.getByRole('button', { name: 'New recovery codes' }).click()
    const dialog = page.getByRole('dialog', { name: 'Make new recovery codes?' })
    await dialog.waitFor()
    await dialog.getByLabel('Password').fill(account.password)
    await dialog.getByLabel('Authentication or recovery code').fill(recoveryCodes[8] ?? '')
    await expectNoAccessibilityViolations(page, 'new recovery codes')
    // Enter in any field of the dialog confirms, as its button does.
    await dialog.getByLabel('Authentication or recovery code').press('Enter')
    await dialog.waitFor({ state: 'hidden' })
    await section.getByRole('heading', { name: 'Your recovery codes' }).waitFor()
    await expect.poll(() => focusedId(page)).toBe('recovery-codes-heading')
    const newCodes = await section.locator('.recovery-codes__list li').allTextContents()
    expect(newCodes).toHaveLength(10)
    expect(newCodes.filter((code) => recoveryCodes.includes(code))).toEqual([])
    expect(await logInElsewhere(app, account, recoveryCodes[9], deviceCookie)).toMatchObject({ status: 401, error: 'two_factor_invalid' })
    recoveryCodes = newCodes
    await section.getByRole('button', { name: 'I have saved them' }).click()
    await section.locator('.two-factor-facts').filter({ hasText: /Recovery codes left\s*10$/ }).waitFor()
    expect(await section.getByText('recovery codes are left').count()).toBe(0)
  }, 60_000)

  it('turns two-factor off after the password and a code, a wrong password shown beside its field, and logs in with the password alone', async () => {
    const section = page.locator('section[aria-labelledby="two-factor-heading"]')
    await section.getByRole('button', { name: 'Turn off', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Turn off two-factor authentication?' })
    await dialog.waitFor()
    await dialog.getByLabel('Password').fill('not the password')
    await dialog.getByLabel('Authentication or recovery code').fill(recoveryCodes[0] ?? '')
    await dialog.getByRole('button', { name: 'Turn off' }).click()
    await dialog.locator('#turn-off-password-error').filter({ hasText: 'is not your current password' }).waitFor()
    await expect.poll(() => focusedId(page)).toBe('turn-off-password')
    await expectNoAccessibilityViolations(page, 'turning two-factor off')
    await dialog.getByLabel('Password').fill(account.password)
    await dialog.getByLabel('Authentication or recovery code').fill('0000-0000-0000')
    await dialog.getByRole('button', { name: 'Turn off' }).click()
    await dialog.locator('#turn-off-code-error').waitFor()
    await expect.poll(() => focusedId(page)).toBe('turn-off-code')
    await dialog.getByLabel('Authentication or recovery code').fill(recoveryCodes[0] ?? '')
    await dialog.getByRole('button', { name: 'Turn off' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await section.getByText('Two-factor authentication is off').waitFor()
    await section.getByRole('button', { name: 'Turn on', exact: true }).waitFor()
    await expect.poll(() => focusedId(page)).toBe('two-factor-heading')

    await page.getByRole('button', { name: 'Log out', exact: true }).click()
    await page.getByLabel('E-mail address').fill(account.email)
    await page.getByLabel('Password').fill(account.password)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
  }, 60_000)

  it('tells the two-factor events on the Activity page, and filters by them', async () => {
    await page.getByRole('link', { name: 'Activity', exact: true }).click()
    const events = page.locator('.activity tbody')
    for (const sentence of [
      'Turned off two-factor authentication',
      'Made new recovery codes (the old ones stopped working)',
      'Used a recovery code (1 left)',
      'Used a recovery code (2 left)',
      // Once an hour, counted: at the log-in elsewhere, and in the dialog.
      /^Gave the right password but a wrong two-factor code/,
      'Turned on two-factor authentication',
    ]) {
      await events.getByText(sentence, { exact: true }).first().waitFor()
    }
    await page.getByLabel('Action').selectOption({ label: 'Two-factor turned on' })
    await page.waitForFunction(() => [...document.querySelectorAll('.activity tbody tr')].every((row) => row.textContent?.includes('Turned on two-factor authentication')))
    expect(await page.locator('.activity tbody tr').count()).toBe(1)
    await expectNoAccessibilityViolations(page, 'activity with two-factor events')
    expect(dashboard.pageErrors).toEqual([])
  }, 60_000)
})

/**
 * The log-in's second step when the first step's answer no longer holds: the password changed
 * meanwhile (the server checks it again with the code), and the way to a sign-up, which the
 * second step does not offer.
 */
describe.skipIf(!hasChromium())("the log-in's second step, the password changed meanwhile", () => {
  let dashboard: OpenDashboard
  let page: Page

  beforeAll(async () => {
    dashboard = await openDashboard()
    page = dashboard.page
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('goes back to the first step, saying the password is wrong, and offers no sign-up meanwhile', async () => {
    const { app } = dashboard.service
    const account = await createTestAccount(app)
    const { secret, recoveryCodes } = await enableTwoFactor(app, account)
    await page.goto(`${dashboard.origin}/dashboard/`)
    await page.getByLabel('E-mail address').fill(account.email)
    await page.getByLabel('Password').fill(account.password)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    const field = page.getByLabel('Authentication code')
    await field.waitFor()
    expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(0)

    // Changed from the account's other session, before this browser sends its code (the change
    // asks for one too: a recovery code, so that the app's next code is left to this log-in).
    const changed = await app.inject({
      method: 'PUT',
      url: '/api/v1/me/password',
      headers: asBrowser(account),
      payload: { currentPassword: account.password, newPassword: 'a new passphrase, longer', code: recoveryCodes[0] },
    })
    expect(changed.statusCode, changed.body).toBe(204)
    await field.fill(authenticatorCode(secret, 1))
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByLabel('Password').waitFor()
    await page.getByText('The e-mail address or password is wrong.').waitFor()
    await expect.poll(() => focusedId(page)).toBe('auth-email')
    expect(await page.getByLabel('E-mail address').inputValue()).toBe(account.email)
    expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(1)
    expect(dashboard.pageErrors).toEqual([])
  }, 60_000)
})
