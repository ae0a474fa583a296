import type { CreatedSite } from '../helpers/dashboard-client.js'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contrastOf } from '../helpers/contrast.js'
import { hasChromium, openLoggedInDashboardWithSite, type OpenDashboard } from './dashboard-support.js'

/**
 * The site's tabs and the range picker as a person with low vision, with forced colours or on a
 * small screen sees them: a focus ring that stands out (WCAG 1.4.11, 2.4.7), the current tab and
 * the chosen option told apart without their colours (1.4.1), the current tab on screen (1.4.10).
 */
describe.skipIf(!hasChromium())("the dashboard's tabs and choices, seen with low vision, forced colours and 320 px", () => {
  let dashboard: OpenDashboard
  let page: Page
  let site: CreatedSite

  beforeAll(async () => {
    ;({ dashboard, site } = await openLoggedInDashboardWithSite({ name: 'Contrast shop' }))
    page = dashboard.page
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('draws a focus ring of at least 3:1 against the page and the card, not clipped by the tab row', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/settings`)
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    const tab = page.getByRole('navigation', { name: 'Site sections' }).getByRole('link', { name: 'Settings' })
    await tab.focus()
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('Tab')
    const ring = await tab.evaluate((element) => {
      const style = getComputedStyle(element)
      return { color: style.outlineColor, style: style.outlineStyle, offset: parseFloat(style.outlineOffset), width: parseFloat(style.outlineWidth) }
    })
    expect(ring.style).not.toBe('none')
    for (const background of ['rgb(255, 255, 255)', 'rgb(243, 244, 246)']) {
      expect(contrastOf(ring.color, background), `${ring.color} on ${background}`).toBeGreaterThanOrEqual(3)
    }
    // Drawn inside the tab: the tab row, which scrolls sideways, cannot clip it.
    expect(ring.offset + ring.width).toBeLessThanOrEqual(0)
  })

  it('keeps the current tab and the chosen range apart in forced colours', async () => {
    await page.emulateMedia({ forcedColors: 'active' })
    try {
      await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/analytics`)
      await page.locator('.segmented__option--checked').first().waitFor()
      const tabs = await page.locator('.tabs__tab').evaluateAll((elements) =>
        elements.map((element) => ({ isCurrent: element.getAttribute('aria-current') === 'page', border: getComputedStyle(element).borderBottomColor, background: getComputedStyle(element).backgroundColor })))
      const current = tabs.filter((tab) => tab.isCurrent)
      expect(current).toHaveLength(1)
      for (const other of tabs.filter((tab) => !tab.isCurrent)) {
        expect(other.border).not.toBe(current[0]?.border)
        expect(other.background).not.toBe(current[0]?.background)
      }
      const options = await page.locator('.segmented__option').evaluateAll((elements) =>
        elements.map((element) => ({ isChecked: element.classList.contains('segmented__option--checked'), background: getComputedStyle(element).backgroundColor })))
      const checked = options.filter((option) => option.isChecked)
      expect(checked).toHaveLength(1)
      expect(options.length).toBeGreaterThan(1)
      for (const other of options.filter((option) => !option.isChecked)) expect(other.background).not.toBe(checked[0]?.background)
    } finally {
      await page.emulateMedia({ forcedColors: 'none' })
    }
  })

  it('shows the current tab on screen at 320 px, the last one too', async () => {
    await page.setViewportSize({ width: 320, height: 640 })
    try {
      await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/members`)
      const current = page.locator('.tabs__tab[aria-current="page"]')
      await current.waitFor()
      expect(await current.textContent()).toBe('Members')
      const box = await current.boundingBox()
      expect(box).not.toBeNull()
      expect(box?.x ?? -1).toBeGreaterThanOrEqual(0)
      expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(320)
    } finally {
      await page.setViewportSize({ width: 1024, height: 768 })
    }
  })
})
