import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asBrowser, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import {
  expectNoAccessibilityViolations,
  focusedId,
  hasChromium,
  listApiKeys,
  openLoggedInDashboard,
  prepareScreenshotDirectory,
  saveScreenshot,
  type OpenDashboard,
} from './dashboard-support.js'

const DAY_MS = 24 * 60 * 60 * 1000

/** A row of the list of keys: its cells after the name are the key's prefix, access, expiry, sites, creation and last use. */
function keyRow(page: Page, name: string) {
  return page.locator('.table tbody tr').filter({ has: page.getByRole('rowheader', { name, exact: true }) })
}

function createKeyForm(page: Page) {
  return page.locator('section[aria-labelledby="create-key-heading"]')
}

/**
 * An API key's access and expiry on the API keys page: what a user chooses, what the list then
 * says, and that the key does as it says. Each key made asks for the password, and a wrong one
 * counts against the log-in's budget of this browser and account: an account of its own here.
 */
describe.skipIf(!hasChromium())("the API keys page: a key's access and expiry, confirmed by the password", () => {
  let dashboard: OpenDashboard
  let page: Page
  let account: TestAccount
  let readKey = ''

  beforeAll(async () => {
    ;[{ dashboard, account }] = await Promise.all([openLoggedInDashboard(), prepareScreenshotDirectory()])
    page = dashboard.page
  }, 120_000)
  afterAll(() => dashboard?.close())

  const keyNames = async () => (await listApiKeys(dashboard.service, account)).map((key) => key.name).sort()

  it('says a wrong password beside its field, which takes focus, and makes no key, keeping the choices made', async () => {
    await page.goto(`${dashboard.origin}/dashboard/api-keys`)
    const form = createKeyForm(page)
    // createTestAccount's key, listed before any is made here.
    await keyRow(page, 'test key').waitFor()
    expect(await form.getByLabel('Read only').getAttribute('aria-describedby')).toBe('api-key-access-read-hint')
    await form.getByLabel('Name').fill('Grafana')
    await form.getByLabel('Read only').check()
    await form.getByLabel('Expires').selectOption({ label: 'In 30 days' })
    const passwordField = form.getByLabel('Password', { exact: true })
    await passwordField.fill('not the password')
    await form.getByRole('button', { name: 'Create key' }).click()

    await form.locator('#api-key-password-error').filter({ hasText: 'is not your current password' }).waitFor()
    await expect.poll(() => focusedId(page)).toBe('api-key-password')
    expect(await passwordField.getAttribute('aria-invalid')).toBe('true')
    expect(await passwordField.getAttribute('aria-describedby')).toBe('api-key-password-error api-key-password-hint')
    expect(await page.getByLabel('API key', { exact: true }).count()).toBe(0)
    expect(await keyNames()).toEqual(['test key'])
    expect(await form.getByLabel('Name').inputValue()).toBe('Grafana')
    expect(await form.getByLabel('Read only').isChecked()).toBe(true)
    expect(await form.getByLabel('Expires').inputValue()).toBe('30d')
    await expectNoAccessibilityViolations(page, 'API key refused for a wrong password')
  }, 60_000)

  it('creates a read-only key that expires in 30 days, listed so, which reads and changes nothing', async () => {
    const form = createKeyForm(page)
    await form.getByLabel('Password', { exact: true }).fill(account.password)
    const submittedAt = Date.now()
    await form.getByRole('button', { name: 'Create key' }).click()
    readKey = await page.getByLabel('API key', { exact: true }).inputValue()
    await page.locator('#new-api-key-hint').filter({ hasText: /^Read only; expires .+\.$/ }).waitFor()
    // The form starts again from the defaults, the password gone.
    expect(await form.getByLabel('Password', { exact: true }).inputValue()).toBe('')
    expect(await form.getByLabel('Full access').isChecked()).toBe(true)
    expect(await form.getByLabel('Expires').inputValue()).toBe('never')
    expect(await form.locator('#api-key-password-error').count()).toBe(0)

    const listed = (await listApiKeys(dashboard.service, account)).find((key) => key.name === 'Grafana')
    expect(listed?.access).toBe('read')
    // 30 days from the submission, as the page counted them.
    const expiresAt = Date.parse(listed?.expiresAt ?? '')
    expect(expiresAt).toBeGreaterThanOrEqual(submittedAt + 30 * DAY_MS)
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * DAY_MS)
    const row = keyRow(page, 'Grafana')
    expect(await row.locator('td').nth(1).textContent()).toBe('Read only')
    // The expiry as the page writes times elsewhere, in the browser's language and zone.
    const day = await page.evaluate((iso) => new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' }), listed?.expiresAt ?? '')
    expect(await row.locator('td').nth(2).textContent()).toContain(day)
    expect(await row.locator('.badge').count()).toBe(0)
    expect(await keyRow(page, 'test key').locator('td').nth(2).textContent()).toBe('Never')

    const asKey = { authorization: `Bearer ${readKey}` }
    const sites = await dashboard.service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asKey })
    expect(sites.statusCode).toBe(200)
    const creation = await dashboard.service.app.inject({ method: 'POST', url: '/api/v1/sites', headers: asKey, payload: { name: 'Not made' } })
    expect(creation.statusCode).toBe(403)
    const after = await dashboard.service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: asKey })
    expect(after.json<{ items: unknown[] }>().items).toEqual([])
  }, 60_000)

  it('marks a key that expired, listed until revoked and refused; a key revoked before "I have copied it" takes its panel', async () => {
    // Made by this session through the API, as another tab would, then expired a second ago (no
    // waiting for the clock: a loaded host could otherwise let the hour's key expire on arrival).
    const made = await dashboard.service.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: asBrowser(account),
      payload: { name: 'one-off job', expiresAt: new Date(Date.now() + 3_600_000).toISOString(), password: account.password },
    })
    expect(made.statusCode).toBe(201)
    const oneOff = made.json<{ id: string; key: string }>()
    await dashboard.service.app.database.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [oneOff.id])
    const refused = await dashboard.service.app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${oneOff.key}` } })
    expect(refused.statusCode).toBe(401)

    // Grafana's one-time panel is still shown: revoking it takes the panel, and the list is loaded again.
    await keyRow(page, 'Grafana').getByRole('button', { name: 'Revoke Grafana' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click()
    await keyRow(page, 'Grafana').waitFor({ state: 'detached' })
    expect(await page.getByLabel('API key', { exact: true }).count()).toBe(0)
    expect((await dashboard.service.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { authorization: `Bearer ${readKey}` } })).statusCode).toBe(401)

    const expired = keyRow(page, 'one-off job')
    await expired.locator('.badge').filter({ hasText: 'Expired' }).waitFor()
    expect(await expired.locator('td').nth(1).textContent()).toBe('Full access')
    await expectNoAccessibilityViolations(page, 'API keys, one expired')
    await saveScreenshot(page, 'api-keys-terms')
  }, 60_000)

  it("says in the Activity page a new key's access and expiry", async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Activity' }).click()
    const sentences = page.locator('.activity tbody .activity__what')
    await sentences.first().waitFor()
    await sentences.getByText(/^Created API key Grafana \(tgak_[\w-]{7}…\), read only, expires .+$/).waitFor()
    expect(await sentences.getByText(/^Created API key one-off job \(tgak_[\w-]{7}…\), expires .+$/).count()).toBe(1)
    // Full access that does not expire, as every key was before: nothing more said.
    expect(await sentences.getByText(/^Created API key test key \(tgak_[\w-]{7}…\)$/).count()).toBe(1)
    expect(dashboard.pageErrors).toEqual([])
  }, 60_000)

  it('makes a key for some sites only, chosen from the account\'s sites, and lists it with their names', async () => {
    const shop = await createTestSite(dashboard.service.app, account, { name: 'Shop' })
    const blog = await createTestSite(dashboard.service.app, account, { name: 'Blog' })
    await page.goto(`${dashboard.origin}/dashboard/api-keys`)
    const form = createKeyForm(page)
    await keyRow(page, 'test key').waitFor()
    // All sites by default; the sites' checkboxes only once "Only these sites" is chosen.
    expect(await form.getByLabel('All sites').isChecked()).toBe(true)
    expect(await form.getByLabel('Shop', { exact: true }).count()).toBe(0)
    await form.getByLabel('Name').fill('shop deploys')
    await form.getByLabel('Only these sites').check()
    await form.getByLabel('Password', { exact: true }).fill(account.password)
    // None chosen: said beside the sites, and nothing is sent.
    await form.getByRole('button', { name: 'Create key' }).click()
    await form.locator('#api-key-sites-error').filter({ hasText: 'Choose at least one site.' }).waitFor()
    expect(await keyNames()).not.toContain('shop deploys')

    await form.getByLabel('Shop', { exact: true }).check()
    await form.getByRole('button', { name: 'Create key' }).click()
    const key = await page.getByLabel('API key', { exact: true }).inputValue()
    await page.locator('#new-api-key-hint').filter({ hasText: /^Full access; only Shop; never expires\.$/ }).waitFor()
    expect(await form.getByLabel('All sites').isChecked()).toBe(true)
    const listed = (await listApiKeys(dashboard.service, account)).find((item) => item.name === 'shop deploys')
    expect(listed?.siteIds).toEqual([shop.id])
    expect(await keyRow(page, 'shop deploys').locator('td').nth(3).textContent()).toBe('Shop')
    expect(await keyRow(page, 'test key').locator('td').nth(3).textContent()).toBe('All sites')
    // It does as the list says: its site, not the other.
    const asKey = { authorization: `Bearer ${key}` }
    expect((await dashboard.service.app.inject({ method: 'GET', url: `/api/v1/sites/${shop.id}`, headers: asKey })).statusCode).toBe(200)
    expect((await dashboard.service.app.inject({ method: 'GET', url: `/api/v1/sites/${blog.id}`, headers: asKey })).statusCode).toBe(404)
    await expectNoAccessibilityViolations(page, 'API keys, one for some sites')
    await saveScreenshot(page, 'api-keys-sites')
    expect(dashboard.pageErrors).toEqual([])
  }, 60_000)

  it('says a full list of keys as it is, not as two-factor turned on or off meanwhile', async () => {
    const { database } = dashboard.service.app
    // As many more as make the most the account may hold.
    await database.query(
      `INSERT INTO api_keys (id, account_id, name, prefix, key_hash)
       SELECT gen_random_uuid(), $1::uuid, 'filler ' || i, 'tgak_filler', 'filler-' || $1::text || '-' || i
         FROM generate_series(1, 100 - (SELECT count(*)::int FROM api_keys WHERE account_id = $1::uuid)) AS i`,
      [account.id],
    )
    try {
      await page.goto(`${dashboard.origin}/dashboard/api-keys`)
      const form = createKeyForm(page)
      await keyRow(page, 'filler 1').waitFor()
      await form.getByLabel('Name').fill('one too many')
      await form.getByLabel('Password', { exact: true }).fill(account.password)
      await form.getByRole('button', { name: 'Create key' }).click()
      await form.getByRole('alert').filter({ hasText: 'An account holds at most 100 API keys, expired ones included until they are revoked; revoke one first.' }).waitFor()
      expect(await form.getByRole('alert').allTextContents()).not.toContainEqual(expect.stringContaining('two-factor'))
      expect(await keyNames()).not.toContain('one too many')
    } finally {
      await database.query("DELETE FROM api_keys WHERE account_id = $1 AND prefix = 'tgak_filler'", [account.id])
    }
  }, 60_000)
})
