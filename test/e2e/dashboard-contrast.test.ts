import { createTestAccount, randomEmail, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite } from '../helpers/site-sharing.js'
import type { Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contrastOf, overBackdrop } from '../helpers/contrast.js'
import { hasChromium, openLoggedInDashboardWithSite, type OpenDashboard } from './dashboard-support.js'

/**
 * The focus ring `element` draws when the keyboard moves the focus to it (focus-visible: focused
 * from the element before, with Tab), and the background it is drawn over.
 */
async function focusRingOf(page: Page, element: Locator): Promise<{ color: string; style: string; offset: number; width: number; background: string }> {
  await element.focus()
  await page.keyboard.press('Shift+Tab')
  await page.keyboard.press('Tab')
  return element.evaluate((focused) => {
    const style = getComputedStyle(focused)
    return { color: style.outlineColor, style: style.outlineStyle, offset: parseFloat(style.outlineOffset), width: parseFloat(style.outlineWidth), background: style.backgroundColor }
  })
}

/**
 * What makes the page wider than its window (WCAG 1.4.10: nothing scrolls sideways at 320 CSS px
 * but what needs two dimensions, as a table, in a box of its own): nothing when it fits, else the
 * page's width and the outermost elements that stick out, not inside a box that scrolls or clips.
 */
function readOverflow(page: Page): Promise<string | undefined> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth
    if (document.documentElement.scrollWidth <= width) return undefined
    const isInClippingBox = (element: Element) => {
      for (let parent = element.parentElement; parent !== null && parent !== document.body; parent = parent.parentElement) {
        if (getComputedStyle(parent).overflowX !== 'visible') return true
      }
      return false
    }
    const sticksOut = (element: Element) => element.getBoundingClientRect().right > width + 0.5 && !isInClippingBox(element)
    const outermost = Array.from(document.body.querySelectorAll('*')).filter((element) => sticksOut(element) && (element.parentElement === null || !sticksOut(element.parentElement)))
    const described = outermost.slice(0, 3).map((element) => {
      const name = `${element.tagName.toLowerCase()}${Array.from(element.classList, (name) => `.${name}`).join('')}`
      return `${name} (${Math.round(element.getBoundingClientRect().width)} px: ${(element.textContent ?? '').trim().slice(0, 40)})`
    })
    return `${document.documentElement.scrollWidth} px wide: ${described.join(', ')}`
  })
}

/** The system's background colour (`Canvas`) as the page computes it: the page's own under forced colours. */
function systemBackground(page: Page): Promise<string> {
  return page.evaluate(() => {
    const probe = document.body.appendChild(document.createElement('div'))
    probe.style.background = 'Canvas'
    const color = getComputedStyle(probe).backgroundColor
    probe.remove()
    return color
  })
}

/**
 * The site's tabs and the range picker as a person with low vision, with forced colours or on a
 * small screen sees them: a focus ring that stands out (WCAG 1.4.11, 2.4.7), the current tab and
 * the chosen option told apart without their colours (1.4.1), the current tab on screen (1.4.10).
 */
describe.skipIf(!hasChromium())("the dashboard's tabs and choices, seen with low vision, forced colours and 320 px", () => {
  let dashboard: OpenDashboard
  let page: Page
  let site: CreatedSite
  let account: TestAccount

  beforeAll(async () => {
    ;({ dashboard, site, account } = await openLoggedInDashboardWithSite({ name: 'Contrast shop' }))
    page = dashboard.page
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('draws a focus ring of at least 3:1 against the page and the card, not clipped by the tab row', async () => {
    await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/settings`)
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    const tab = page.getByRole('navigation', { name: 'Site sections' }).getByRole('link', { name: 'Settings' })
    const ring = await focusRingOf(page, tab)
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

  it('shows each range option at 4.5:1 and the chosen one apart, and the current tab\'s focus ring at 3:1, in dark and light forced colours', async () => {
    for (const colorScheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ forcedColors: 'active', colorScheme })
      try {
        await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/analytics`)
        await page.locator('.segmented__option--checked').first().waitFor()
        const options = await page.locator('.segmented__option').evaluateAll((elements) =>
          elements.map((element) => {
            const style = getComputedStyle(element)
            return { name: (element.textContent ?? '').trim(), isChecked: element.classList.contains('segmented__option--checked'), color: style.color, background: style.backgroundColor }
          }))
        const checked = options.find((option) => option.isChecked)
        expect(checked).toBeDefined()
        const canvas = await systemBackground(page)
        for (const option of options) {
          expect(contrastOf(option.color, overBackdrop(option.background, canvas)), `${colorScheme}: ${option.name}, ${option.color} on ${option.background}`).toBeGreaterThanOrEqual(4.5)
          if (!option.isChecked) {
            expect(option.background, `${colorScheme}: ${option.name} on the page's Canvas`).toBe(canvas)
            expect(option.background, `${colorScheme}: ${option.name} told apart from the chosen one`).not.toBe(checked?.background)
          }
        }
        const tab = page.getByRole('navigation', { name: 'Site sections' }).getByRole('link', { name: 'Analytics' })
        const ring = await focusRingOf(page, tab)
        expect(ring.style).not.toBe('none')
        expect(contrastOf(ring.color, overBackdrop(ring.background, canvas)), `${colorScheme}: ring ${ring.color} on ${ring.background}`).toBeGreaterThanOrEqual(3)
      } finally {
        await page.emulateMedia({ forcedColors: 'none', colorScheme: 'light' })
      }
    }
  })

  it("draws the chart's axes in the system text colour and keeps its legend's markers apart in dark forced colours", async () => {
    await page.emulateMedia({ forcedColors: 'active', colorScheme: 'dark' })
    try {
      await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/analytics`)
      await page.locator('.chart canvas').waitFor()
      const markers = await page.locator('.chart .u-legend .u-marker').evaluateAll((elements) =>
        elements.map((element) => `${getComputedStyle(element).borderTopColor} ${getComputedStyle(element).backgroundColor}`))
      expect(markers.length).toBeGreaterThan(1)
      expect(new Set(markers).size, markers.join(', ')).toBe(markers.length)
      // The canvas's pixels: its axes' text and ticks in CanvasText (white here), none in the grey for a light page (2:1 on black).
      const pixels = await page.evaluate(() => {
        const probe = document.body.appendChild(document.createElement('div'))
        probe.style.color = 'CanvasText'
        const [red, green, blue] = (getComputedStyle(probe).color.match(/\d+/g) ?? []).map(Number)
        probe.remove()
        const canvas = document.querySelector<HTMLCanvasElement>('.chart canvas')
        const data = canvas?.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? new Uint8ClampedArray()
        let systemText = 0
        let grey = 0
        for (let index = 0; index < data.length; index += 4) {
          if (data[index + 3] === 0) continue
          const [r, g, b] = [data[index], data[index + 1], data[index + 2]]
          if (r === red && g === green && b === blue) systemText += 1
          if (r === 0x37 && g === 0x41 && b === 0x51) grey += 1
        }
        return { systemText, grey }
      })
      expect(pixels.grey).toBe(0)
      expect(pixels.systemText).toBeGreaterThan(0)
    } finally {
      await page.emulateMedia({ forcedColors: 'none', colorScheme: 'light' })
    }
  })

  it("draws each of the chart's lines at 3:1 or more against the background, their colours still apart, in dark and light forced colours", async () => {
    for (const colorScheme of ['dark', 'light'] as const) {
      await page.emulateMedia({ forcedColors: 'active', colorScheme })
      try {
        await page.goto(`${dashboard.origin}/dashboard/sites/${site.id}/analytics`)
        await page.locator('.chart canvas').waitFor()
        // The colours the lines are drawn in: uPlot gives each legend marker its series' stroke
        // (the first series is the time axis).
        const lines = await page.locator('.chart .u-legend .u-series').evaluateAll((elements) =>
          elements.slice(1).flatMap((element) => {
            const marker = element.querySelector<HTMLElement>('.u-marker')
            return marker === null ? [] : [{ name: (element.querySelector('.u-label')?.textContent ?? '').trim(), color: marker.style.borderTopColor }]
          }))
        const canvas = await systemBackground(page)
        expect(lines.map((line) => line.name)).toEqual(['Allowed', 'Challenged', 'Blocked', 'Rejected'])
        for (const line of lines) expect(contrastOf(line.color, canvas), `${colorScheme}: ${line.name} ${line.color} on ${canvas}`).toBeGreaterThanOrEqual(3)
        expect(new Set(lines.map((line) => line.color)).size).toBe(lines.length)
      } finally {
        await page.emulateMedia({ forcedColors: 'none', colorScheme: 'light' })
      }
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

  // The last of these tests: it logs out, for the log-in and sign-up forms.
  it('fits each main page into a 320 px window, nothing but tables scrolling sideways', async () => {
    const { app } = dashboard.service
    // A member besides the owner, with a long address: their row has the members table's widest
    // cells (a role select, Make owner, Remove and the address).
    const member = await createTestAccount(app, { email: `a-rather-long-name.${randomEmail()}` })
    await shareSite(app, account, member, site.id, 'admin')
    const pages: Record<string, string> = {
      sites: '/',
      'new site': '/sites/new',
      ...Object.fromEntries(['analytics', 'log', 'settings', 'webhook', 'integration', 'members'].map((tab) => [`site ${tab}`, `/sites/${site.id}/${tab}`])),
      'API keys': '/api-keys',
      activity: '/activity',
      'page not found': '/nowhere',
      account: '/account',
    }
    const overflows: Record<string, string> = {}
    /** Opens the page and waits until it is drawn: its heading, and nothing loading. */
    const measure = async (name: string, path: string) => {
      await page.goto(`${dashboard.origin}/dashboard${path}`)
      await page.locator('h1').waitFor()
      await page.waitForFunction(() => document.querySelector('.loading') === null)
      const overflow = await readOverflow(page)
      if (overflow !== undefined) overflows[name] = overflow
    }
    await page.setViewportSize({ width: 320, height: 256 })
    try {
      for (const [name, path] of Object.entries(pages)) await measure(name, path)
      // The account page's two-factor setup, whose submit button has the longest label of the dashboard.
      await page.getByRole('button', { name: 'Turn on', exact: true }).click()
      await page.getByRole('button', { name: 'Turn on two-factor authentication' }).waitFor()
      const setup = await readOverflow(page)
      if (setup !== undefined) overflows['two-factor setup'] = setup
      await page.context().clearCookies()
      await measure('log-in', '/login')
      await measure('sign-up', '/signup')
      expect(overflows).toEqual({})
    } finally {
      await page.setViewportSize({ width: 1024, height: 768 })
    }
  }, 60_000)
})
