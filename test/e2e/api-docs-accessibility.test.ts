import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectNoAccessibilityViolations, hasChromium, openLoggedInDashboard, type OpenDashboard } from './dashboard-support.js'

/** The API reference (/docs, Swagger UI with the service's theme) as axe-core finds it, screen by screen. */
describe.skipIf(!hasChromium())('the API reference at /docs', () => {
  let dashboard: OpenDashboard
  let page: Page

  beforeAll(async () => {
    ;({ dashboard } = await openLoggedInDashboard())
    page = dashboard.page
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('has no WCAG A or AA problems as it opens, with an operation tried out, in the authorization dialog and among the schemas', async () => {
    await page.goto(`${dashboard.origin}/docs`)
    expect(await page.title()).toBe('Tollgate API reference')
    await page.locator('.opblock').first().waitFor()
    await expectNoAccessibilityViolations(page, 'API reference')

    // An operation opened and run: its path is no link inside the button that opens it.
    const health = page.locator('#operations-operations-getHealth')
    await health.locator('.opblock-summary-control').click()
    expect(await health.locator('.opblock-summary-control a[href]').count()).toBe(0)
    await health.getByRole('button', { name: 'Try it out' }).click()
    await health.getByRole('button', { name: 'Execute' }).click()
    await health.locator('.live-responses-table').waitFor()
    const status = await health.locator('.live-responses-table tbody .response-col_status').first().textContent()
    expect(status?.trim()).toBe('200')
    // One that takes a body, in the middle of being tried.
    const post = page.locator('.opblock-post').first()
    await post.locator('.opblock-summary-control').click()
    await post.getByRole('button', { name: 'Try it out' }).click()
    await post.getByRole('button', { name: 'Execute' }).waitFor()
    await expectNoAccessibilityViolations(page, 'API reference, operations tried out')

    // The authorization dialog: its buttons named by what they say.
    await page.locator('.btn.authorize').first().click()
    const dialog = page.locator('.dialog-ux')
    await dialog.waitFor()
    // Its close icon has a name; each scheme's own Close button says it.
    expect(await dialog.locator('.close-modal').getAttribute('aria-label')).toBe('Close')
    expect(await dialog.getByRole('button', { name: /^Authorize/ }).count()).toBeGreaterThan(0)
    await expectNoAccessibilityViolations(page, 'API reference, authorization')
    await dialog.locator('.close-modal').click()
    await dialog.waitFor({ state: 'detached' })

    // The schemas, one of them opened.
    const models = page.locator('section.models')
    await models.locator('.model-container').first().locator('button').first().click()
    await expectNoAccessibilityViolations(page, 'API reference, schemas')
    expect(dashboard.pageErrors).toEqual([])
  }, 90_000)
})
