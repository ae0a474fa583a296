import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, withKey } from '../helpers/api-keys.js'
import { asScript, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { expectNoAccessibilityViolations, focusedId, hasChromium, listApiKeys, openLoggedInDashboard, type OpenDashboard } from './dashboard-support.js'

function editKeyForm(page: Page) {
  return page.locator('section[aria-labelledby="edit-key-heading"]')
}

/** The API keys page's edit form: a key renamed and widened to another site, by keyboard, its secret kept. */
describe.skipIf(!hasChromium())("the API keys page: editing a key's name and sites", () => {
  let dashboard: OpenDashboard
  let page: Page
  let account: TestAccount

  beforeAll(async () => {
    ;({ dashboard, account } = await openLoggedInDashboard())
    page = dashboard.page
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('opens from the Edit button by keyboard, asks for the password only to widen, and the key reaches the added site at once', async () => {
    const { app } = dashboard.service
    const shop = await createTestSite(app, account, { name: 'Shop' })
    const blog = await createTestSite(app, account, { name: 'Blog' })
    const key = await createKey(app, account, { name: 'shop ci', siteIds: [shop.id] })
    await page.goto(`${dashboard.origin}/dashboard/api-keys`)
    const edit = page.getByRole('button', { name: 'Edit shop ci' })
    await edit.focus()
    await page.keyboard.press('Enter')
    const form = editKeyForm(page)
    await form.waitFor()
    expect(await focusedId(page)).toBe('edit-key-heading')
    // Filled in with the key's terms.
    expect(await form.getByLabel('Name').inputValue()).toBe('shop ci')
    expect(await form.getByLabel('Only these sites').isChecked()).toBe(true)
    expect(await form.getByLabel('Shop', { exact: true }).isChecked()).toBe(true)
    expect(await form.getByLabel('Blog', { exact: true }).isChecked()).toBe(false)

    await form.getByLabel('Name').fill('web ci')
    await form.getByLabel('Blog', { exact: true }).check()
    await form.getByRole('button', { name: 'Save changes' }).click()
    // A widening without the password: said beside the field, which takes focus; nothing changed.
    await form.locator('#edit-key-password-error').waitFor()
    expect(await focusedId(page)).toBe('edit-key-password')
    expect((await listApiKeys(dashboard.service, account)).find((item) => item.name === 'shop ci')?.siteIds).toEqual([shop.id])
    await expectNoAccessibilityViolations(page, 'API keys, editing a key')

    await page.keyboard.type(account.password)
    await page.keyboard.press('Enter')
    await form.waitFor({ state: 'detached' })
    expect(await focusedId(page)).toBe('keys-heading')
    const row = page.locator('.table tbody tr').filter({ has: page.getByRole('rowheader', { name: 'web ci', exact: true }) })
    await row.waitFor()
    expect(await row.locator('td').nth(3).textContent()).toBe('Shop, Blog')
    expect((await withKey(app, 'GET', `/api/v1/sites/${blog.id}`, key.key)).statusCode).toBe(200)
    expect(dashboard.pageErrors).toEqual([])
  }, 60_000)

  it('renames a key whose list names a deleted site without touching its list, audited as a rename only', async () => {
    const { app } = dashboard.service
    const kept = await createTestSite(app, account, { name: 'Kept' })
    const deleted = await createTestSite(app, account, { name: 'Deleted' })
    const key = await createKey(app, account, { name: 'two sites', siteIds: [kept.id, deleted.id] })
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/sites/${deleted.id}`, headers: asScript(account) })).statusCode).toBe(204)
    await page.goto(`${dashboard.origin}/dashboard/api-keys`)
    await page.getByRole('button', { name: 'Edit two sites' }).click()
    const form = editKeyForm(page)
    await form.waitFor()
    await form.getByLabel('Name').fill('one site left')
    await form.getByRole('button', { name: 'Save changes' }).click()
    await form.waitFor({ state: 'detached' })
    expect((await listApiKeys(dashboard.service, account)).find((item) => item.name === 'one site left')).toMatchObject({ siteIds: [kept.id, deleted.id] })
    const audit = await app.inject({ method: 'GET', url: '/api/v1/audit-log?action=api_key.updated', headers: asScript(account) })
    const events = audit.json<{ items: { details: { apiKeyId: string; changes: { field: string }[] } }[] }>().items.filter((event) => event.details.apiKeyId === key.id)
    expect(events.map((event) => event.details.changes.map((change) => change.field))).toEqual([['name']])
    expect(dashboard.pageErrors).toEqual([])
  }, 60_000)

  it('makes a key for some addresses, shows them in the list, and narrows them without the password; a bad entry is said beside the field', async () => {
    const { app } = dashboard.service
    await page.goto(`${dashboard.origin}/dashboard/api-keys`)
    const create = page.locator('section[aria-labelledby="create-key-heading"]')
    await create.getByLabel('Name').fill('office only')
    await create.getByLabel('Allowed addresses').fill('203.0.113.7/24\n2001:DB8::/48')
    await create.getByLabel('Password', { exact: true }).fill(account.password)
    await create.getByRole('button', { name: 'Create key' }).click()
    await page.locator('#new-api-key-hint').filter({ hasText: 'from 203.0.113.0/24, 2001:db8::/48 only' }).waitFor()
    const secret = await page.getByLabel('API key', { exact: true }).inputValue()
    expect(await create.getByLabel('Allowed addresses').inputValue()).toBe('')
    const row = page.locator('.table tbody tr').filter({ has: page.getByRole('rowheader', { name: 'office only', exact: true }) })
    await row.waitFor()
    await expect.poll(() => row.locator('td').nth(4).textContent()).toBe('203.0.113.0/24, 2001:db8::/48')
    const fromOffice = () => app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${secret}` }, remoteAddress: '203.0.113.9' })
    expect((await fromOffice()).statusCode).toBe(200)

    await page.getByRole('button', { name: 'Edit office only' }).click()
    const form = editKeyForm(page)
    await form.waitFor()
    const addresses = form.getByLabel('Allowed addresses')
    expect(await addresses.inputValue()).toBe('203.0.113.0/24\n2001:db8::/48')
    await addresses.fill('203.0.113.7\nour-office')
    await form.getByRole('button', { name: 'Save changes' }).click()
    await form.locator('#edit-key-addresses-error').filter({ hasText: 'our-office' }).waitFor()
    expect(await focusedId(page)).toBe('edit-key-addresses')
    await expectNoAccessibilityViolations(page, 'API keys, a bad allowed address')

    // Within the list it had: a narrowing, saved without the password.
    await addresses.fill('203.0.113.7\n203.0.113.8')
    await form.getByRole('button', { name: 'Save changes' }).click()
    await form.waitFor({ state: 'detached' })
    // The list is read again once the form closes.
    await expect.poll(() => row.locator('td').nth(4).textContent()).toBe('203.0.113.7, 203.0.113.8')
    const refused = await fromOffice()
    expect(refused.statusCode).toBe(403)
    expect(refused.json()).toMatchObject({ error: { code: 'api_key_address_refused' } })
    expect(dashboard.pageErrors).toEqual([])
  }, 60_000)
})
