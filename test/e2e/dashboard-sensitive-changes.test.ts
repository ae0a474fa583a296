import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestAccount } from '../helpers/dashboard-client.js'
import type { TestApp } from '../helpers/test-app.js'
import { authenticatorApp, enableTwoFactor, logInElsewhere } from '../helpers/two-factor.js'
import { expectNoAccessibilityViolations, focusedId, hasChromium, listApiKeys, logInNewAccount, openDashboard, type OpenDashboard } from './dashboard-support.js'

const CODE_LABEL = 'Authentication or recovery code'
const WRONG_CODE = "is not the authenticator app's current code, nor an unused recovery code"

function passwordForm(page: Page) {
  return page.locator('section[aria-labelledby="password-heading"]')
}

function createKeyForm(page: Page) {
  return page.locator('section[aria-labelledby="create-key-heading"]')
}

async function listApiKeyNames(service: TestApp, account: TestAccount): Promise<string[]> {
  return (await listApiKeys(service, account)).map((key) => key.name)
}

function twoFactorSection(page: Page) {
  return page.locator('section[aria-labelledby="two-factor-heading"]')
}

/** The section's count of recovery codes left, once it says `left`. */
async function waitForRecoveryCodesLeft(page: Page, left: number) {
  await twoFactorSection(page)
    .locator('.two-factor-facts')
    .filter({ hasText: new RegExp(`Recovery codes left\\s*${left}$`) })
    .waitFor()
}

const hasBrowser = hasChromium()

/**
 * One service and browser for both suites below, each logged in to an account of its own: the
 * service's building on a fresh embedded database was most of each suite's setup (7 to 10 s on a
 * loaded host).
 */
let dashboard: OpenDashboard
beforeAll(async () => {
  if (hasBrowser) dashboard = await openDashboard()
}, 120_000)
afterAll(() => dashboard?.close())

/**
 * With two-factor authentication on, creating an API key, changing the password and deleting the
 * account ask for a code as well as the password: a key is created and the password changed with
 * the authenticator app's code (each after a wrong one, which does nothing), and the account is
 * deleted with a recovery code.
 */
describe.skipIf(!hasBrowser)('creating an API key, changing the password and deleting the account with two-factor authentication on', () => {
  let page: Page
  let account: TestAccount
  let app: ReturnType<typeof authenticatorApp>
  let recoveryCodes: string[] = []

  beforeAll(async () => {
    account = await logInNewAccount(dashboard)
    page = dashboard.page
    // With the step before now's code: the app's next two codes (the current step's and the next
    // one's, both taken at once) are left to the tests below, which wait for no step to begin.
    const enabled = await enableTwoFactor(dashboard.service.app, account, { stepsFromNow: -1 })
    app = authenticatorApp(enabled.secret, enabled.usedAt)
    recoveryCodes = enabled.recoveryCodes
  }, 60_000)

  it("asks for a code to create an API key: a wrong one is said beside its field and creates none, the app's code creates it", async () => {
    await page.goto(`${dashboard.origin}/dashboard/api-keys`)
    const form = createKeyForm(page)
    const codeField = form.getByLabel(CODE_LABEL)
    await codeField.waitFor()
    expect(await codeField.getAttribute('aria-describedby')).toBe('api-key-code-hint')
    await form.getByLabel('Name').fill('CI deploy')
    await form.getByLabel('Password', { exact: true }).fill(account.password)
    await codeField.fill(app.wrongCode())
    await form.getByRole('button', { name: 'Create key' }).click()

    await form.locator('#api-key-code-error').filter({ hasText: WRONG_CODE }).waitFor()
    expect(await codeField.getAttribute('aria-invalid')).toBe('true')
    expect(await codeField.inputValue()).toBe('')
    await expect.poll(() => focusedId(page)).toBe('api-key-code')
    expect(await form.getByLabel('Password', { exact: true }).getAttribute('aria-invalid')).toBeNull()
    expect(await page.getByLabel('API key', { exact: true }).count()).toBe(0)
    // The account's first key (createTestAccount's) and no other.
    expect(await listApiKeyNames(dashboard.service, account)).toEqual(['test key'])
    await expectNoAccessibilityViolations(page, 'API key creation with a wrong code')

    // The password stays in its field: only the code is typed again.
    await codeField.fill(await app.code())
    await form.getByRole('button', { name: 'Create key' }).click()
    const key = await page.getByLabel('API key', { exact: true }).inputValue()
    expect((await listApiKeyNames(dashboard.service, account)).sort()).toEqual(['CI deploy', 'test key'])
    expect((await dashboard.service.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200)
    // Both go once the key is made; the field stays, for the next key, while two-factor is on.
    expect(await form.getByLabel('Password', { exact: true }).inputValue()).toBe('')
    expect(await codeField.inputValue()).toBe('')
    expect(await codeField.getAttribute('aria-invalid')).toBeNull()
    expect(dashboard.pageErrors).toEqual([])
  }, 90_000)

  it("asks for a code to change the password: a wrong one is said beside its field and changes nothing, the app's code changes it", async () => {
    const service = dashboard.service.app
    const newPassword = 'a new passphrase, with a code'
    await page.goto(`${dashboard.origin}/dashboard/account`)
    await waitForRecoveryCodesLeft(page, 10)
    const form = passwordForm(page)
    const codeField = form.getByLabel(CODE_LABEL)
    expect(await codeField.getAttribute('aria-describedby')).toBe('password-change-code-hint')
    await form.getByLabel('Current password').fill(account.password)
    await form.getByLabel('New password').fill(newPassword)
    await codeField.fill(app.wrongCode())
    await form.getByRole('button', { name: 'Change password' }).click()

    await form.locator('#password-change-code-error').filter({ hasText: WRONG_CODE }).waitFor()
    expect(await codeField.getAttribute('aria-invalid')).toBe('true')
    expect(await codeField.getAttribute('aria-describedby')).toBe('password-change-code-error password-change-code-hint')
    // Emptied for the next code, and focused, so the keyboard is where the next code goes.
    expect(await codeField.inputValue()).toBe('')
    await expect.poll(() => focusedId(page)).toBe('password-change-code')
    expect(await form.getByLabel('Current password').getAttribute('aria-invalid')).toBeNull()
    expect(await form.getByText('Your password was changed.').count()).toBe(0)
    await expectNoAccessibilityViolations(page, 'password change with a wrong code')
    // Nothing changed: the old password is still the right one (a log-in asks for the code after it), the new one is not.
    expect(await logInElsewhere(service, account)).toMatchObject({ status: 401, error: 'two_factor_required' })
    expect(await logInElsewhere(service, { ...account, password: newPassword })).toMatchObject({ status: 401, error: 'invalid_credentials' })

    // The passwords stay in their fields: only the code is typed again.
    await codeField.fill(await app.code())
    // The section's status is loaded again after the change (a recovery code would be one fewer).
    const statusReloaded = page.waitForResponse((response) => response.url().endsWith('/api/v1/me/two-factor') && response.request().method() === 'GET')
    await form.getByRole('button', { name: 'Change password' }).click()
    await form.getByText('Your password was changed.').waitFor()
    expect((await (await statusReloaded).json()) as { recoveryCodesLeft: number }).toMatchObject({ recoveryCodesLeft: 10 })
    expect(await codeField.inputValue()).toBe('')
    expect(await logInElsewhere(service, { ...account, password: newPassword })).toMatchObject({ status: 401, error: 'two_factor_required' })
    expect(await logInElsewhere(service, account)).toMatchObject({ status: 401, error: 'invalid_credentials' })
    account.password = newPassword
    // An authenticator code was given: the recovery codes are all left.
    await waitForRecoveryCodesLeft(page, 10)
  }, 90_000)

  it('deletes the account after the password and a recovery code, saying in the dialog a wrong password or a change of two-factor meanwhile', async () => {
    await page.getByRole('button', { name: 'Delete account' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete your account?' })
    await dialog.getByText('Enter your password and a code to confirm.').waitFor()
    const codeField = dialog.getByLabel(CODE_LABEL)
    await dialog.getByLabel('Password').fill('not the password')
    await codeField.fill(recoveryCodes[0] ?? '')
    await dialog.getByRole('button', { name: 'Delete account' }).click()
    await dialog.locator('#deletion-password-error').filter({ hasText: 'is not your current password' }).waitFor()
    await expect.poll(() => focusedId(page)).toBe('deletion-password')
    // Not a wrong code: it stays for the next try.
    expect(await codeField.inputValue()).toBe(recoveryCodes[0])
    expect(await codeField.getAttribute('aria-invalid')).toBeNull()
    await expectNoAccessibilityViolations(page, 'account deletion with two-factor on')

    // Two-factor turned off or on between the page's load and the deletion (the API's 409, answered
    // here, as the race cannot be timed from outside): the dialog says so and the status is loaded again.
    await dialog.getByLabel('Password').fill(account.password)
    await page.route('**/api/v1/me', (route) =>
      route.request().method() === 'DELETE'
        ? route.fulfill({
            status: 409,
            contentType: 'application/json',
            body: JSON.stringify({
              error: { code: 'conflict', message: 'Two-factor authentication was turned off meanwhile.', details: [{ field: 'code', message: 'was asked for' }], requestId: 'req-409' },
            }),
          })
        : route.fallback(),
    )
    const statusReloaded = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/me/two-factor')
    await dialog.getByRole('button', { name: 'Delete account' }).click()
    await dialog.getByRole('alert').filter({ hasText: 'Nothing was changed: two-factor authentication was turned on or off meanwhile' }).waitFor()
    expect((await statusReloaded).status()).toBe(200)
    expect(await codeField.inputValue()).toBe('')
    await page.unroute('**/api/v1/me')

    // Enter in the code field confirms, as the dialog's button does.
    await codeField.fill(recoveryCodes[0] ?? '')
    await codeField.press('Enter')
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    expect(await page.locator('.notice').allTextContents()).toEqual(['Your account and everything of it were deleted.'])
    expect(await logInElsewhere(dashboard.service.app, account)).toMatchObject({ status: 401, error: 'invalid_credentials' })
    expect(dashboard.pageErrors).toEqual([])
  }, 60_000)
})

/**
 * With two-factor authentication off, the Account page's forms ask for no code; they follow its
 * turning on and off in the section, and a turning on in another tab, without a reload. The API
 * keys page's form asks for the code the API asks for, as they do, when it could not learn that
 * two-factor is on.
 */
describe.skipIf(!hasBrowser)('changing the password with two-factor authentication off, then turned on and off', () => {
  let page: Page
  let account: TestAccount

  // The recovery codes of two-factor turned on in another tab (below).
  let lateRecoveryCodes: string[] = []

  // The suite above ended logged out, its account deleted. Its page errors, if any, failed it
  // already; this suite's own are judged from here.
  beforeAll(async () => {
    dashboard.pageErrors.length = 0
    account = await logInNewAccount(dashboard)
    page = dashboard.page
  }, 60_000)

  async function expectNoCodeAsked() {
    expect(await passwordForm(page).getByLabel(CODE_LABEL).count()).toBe(0)
    await page.getByRole('button', { name: 'Delete account' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete your account?' })
    await dialog.getByText('Enter your password to confirm.').waitFor()
    expect(await dialog.getByLabel(CODE_LABEL).count()).toBe(0)
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })
  }

  it('asks for no code, and changes the password with the current one alone, as before', async () => {
    const service = dashboard.service.app
    const newPassword = 'a new passphrase, no code'
    await page.goto(`${dashboard.origin}/dashboard/account`)
    await twoFactorSection(page).getByText('Off. With two-factor authentication on').waitFor()
    await expectNoCodeAsked()
    const form = passwordForm(page)
    await form.getByLabel('Current password').fill(account.password)
    await form.getByLabel('New password').fill(newPassword)
    await form.getByRole('button', { name: 'Change password' }).click()
    await form.getByText('Your password was changed.').waitFor()
    expect(await logInElsewhere(service, { ...account, password: newPassword })).toMatchObject({ status: 200 })
    expect(await logInElsewhere(service, account)).toMatchObject({ status: 401, error: 'invalid_credentials' })
    account.password = newPassword
  }, 60_000)

  it('asks for a code once two-factor is turned on in the section, and no more once it is turned off there', async () => {
    const section = twoFactorSection(page)
    await section.getByRole('button', { name: 'Turn on', exact: true }).click()
    const key = (await section.getByLabel('Setup key').inputValue()).replaceAll(' ', '')
    await section.getByLabel('Authentication code').fill(await authenticatorApp(key).code())
    await section.getByLabel('Current password').fill(account.password)
    await section.getByRole('button', { name: 'Turn on two-factor authentication' }).click()
    await section.getByRole('heading', { name: 'Your recovery codes' }).waitFor()
    const recoveryCodes = await section.locator('.recovery-codes__list li').allTextContents()
    await section.getByRole('button', { name: 'I have saved them' }).click()

    const codeField = passwordForm(page).getByLabel(CODE_LABEL)
    await codeField.waitFor()
    await expectNoAccessibilityViolations(page, 'password change with two-factor on')
    await page.getByRole('button', { name: 'Delete account' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete your account?' })
    await dialog.getByLabel(CODE_LABEL).waitFor()
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })

    await section.getByRole('button', { name: 'Turn off', exact: true }).click()
    const turnOff = page.getByRole('dialog', { name: 'Turn off two-factor authentication?' })
    await turnOff.getByLabel('Password').fill(account.password)
    await turnOff.getByLabel(CODE_LABEL).fill(recoveryCodes[0] ?? '')
    await turnOff.getByRole('button', { name: 'Turn off' }).click()
    await section.getByText('Two-factor authentication is off').waitFor()
    await codeField.waitFor({ state: 'detached' })
    await expectNoCodeAsked()
  }, 90_000)

  it('asks for a code, beside the code field that then comes up, when two-factor was turned on in another tab', async () => {
    const service = dashboard.service.app
    const newPassword = 'another passphrase, the code asked late'
    // The same session, as another tab of this browser: the page still shows two-factor off.
    const { recoveryCodes } = await enableTwoFactor(service, account)
    lateRecoveryCodes = recoveryCodes
    const form = passwordForm(page)
    expect(await form.getByLabel(CODE_LABEL).count()).toBe(0)
    await form.getByLabel('Current password').fill(account.password)
    await form.getByLabel('New password').fill(newPassword)
    await form.getByRole('button', { name: 'Change password' }).click()

    await form.locator('#password-change-code-error').filter({ hasText: 'is required: two-factor authentication is on' }).waitFor()
    await expect.poll(() => focusedId(page)).toBe('password-change-code')
    await twoFactorSection(page).getByText(/^On since /).waitFor()
    await form.getByLabel(CODE_LABEL).fill(recoveryCodes[0] ?? '')
    await form.getByRole('button', { name: 'Change password' }).click()
    await form.getByText('Your password was changed.').waitFor()
    // The recovery code is used up, which the section counts at once.
    await waitForRecoveryCodesLeft(page, 9)
    expect(await logInElsewhere(service, { ...account, password: newPassword }, recoveryCodes[0])).toMatchObject({ status: 401, error: 'two_factor_invalid' })
    expect(await logInElsewhere(service, account)).toMatchObject({ status: 401, error: 'invalid_credentials' })
    account.password = newPassword
    expect(dashboard.pageErrors).toEqual([])
  }, 60_000)

  // A page load, three password checks (the last hashes the new password too) and a log-in: no wait
  // of its own, but a loaded CI host took more than 10 s for a password change, so 60 s could run
  // out (it did once) before any step's 20 s did.
  it('keeps the code field the API asked for while the two-factor status cannot be loaded, through a wrong password', async () => {
    const newPassword = 'a passphrase, the status unknown'
    // Two-factor is on (the test above), but the page cannot learn it.
    const isStatus = (url: URL) => url.pathname === '/api/v1/me/two-factor'
    await page.route(isStatus, (route) => (route.request().method() === 'GET' ? route.abort() : route.continue()))
    try {
      await page.goto(`${dashboard.origin}/dashboard/account`)
      const form = passwordForm(page)
      await form.getByLabel('Current password').waitFor()
      expect(await form.getByLabel(CODE_LABEL).count()).toBe(0)
      await form.getByLabel('Current password').fill(account.password)
      await form.getByLabel('New password').fill(newPassword)
      await form.getByRole('button', { name: 'Change password' }).click()
      await form.locator('#password-change-code-error').filter({ hasText: 'is required: two-factor authentication is on' }).waitFor()
      expect(await form.locator('#current-password-error').count()).toBe(0)

      // A wrong password now: its error replaces the code's, and the code field stays, with the code typed.
      await form.getByLabel('Current password').fill('not the password')
      await form.getByLabel(CODE_LABEL).fill(lateRecoveryCodes[1] ?? '')
      await form.getByRole('button', { name: 'Change password' }).click()
      await form.locator('#current-password-error').filter({ hasText: 'is not your current password' }).waitFor()
      expect(await form.getByLabel(CODE_LABEL).inputValue()).toBe(lateRecoveryCodes[1])

      await form.getByLabel('Current password').fill(account.password)
      await form.getByRole('button', { name: 'Change password' }).click()
      await form.getByText('Your password was changed.').waitFor()
      expect(await logInElsewhere(dashboard.service.app, { ...account, password: newPassword }, lateRecoveryCodes[1])).toMatchObject({ status: 401, error: 'two_factor_invalid' })
      account.password = newPassword
    } finally {
      await page.unroute(isStatus)
    }
  }, 90_000)

  it('shows the code field the API asks for on the API keys page too, while the two-factor status cannot be loaded', async () => {
    const isStatus = (url: URL) => url.pathname === '/api/v1/me/two-factor'
    await page.route(isStatus, (route) => (route.request().method() === 'GET' ? route.abort() : route.continue()))
    try {
      await page.goto(`${dashboard.origin}/dashboard/api-keys`)
      const form = createKeyForm(page)
      await form.getByLabel('Password', { exact: true }).waitFor()
      expect(await form.getByLabel(CODE_LABEL).count()).toBe(0)
      await form.getByLabel('Name').fill('monitor')
      await form.getByLabel('Read only').check()
      await form.getByLabel('Password', { exact: true }).fill(account.password)
      await form.getByRole('button', { name: 'Create key' }).click()
      await form.locator('#api-key-code-error').filter({ hasText: 'is required: two-factor authentication is on' }).waitFor()
      await expect.poll(() => focusedId(page)).toBe('api-key-code')
      expect(await listApiKeyNames(dashboard.service, account)).not.toContain('monitor')

      // The rest of the form is kept: only the code is added.
      await form.getByLabel(CODE_LABEL).fill(lateRecoveryCodes[2] ?? '')
      await form.getByRole('button', { name: 'Create key' }).click()
      await page.getByRole('heading', { name: 'Your new API key “monitor”' }).waitFor()
      await page.locator('#new-api-key-hint').filter({ hasText: 'Read only; never expires.' }).waitFor()
      expect(await listApiKeyNames(dashboard.service, account)).toContain('monitor')
      // Done: the field the API asked for goes with the form's password and code.
      await form.getByLabel(CODE_LABEL).waitFor({ state: 'detached' })
    } finally {
      await page.unroute(isStatus)
    }
  }, 60_000)
})
