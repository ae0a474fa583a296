/// <reference lib="dom" />
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { contrastOf } from '../helpers/contrast.js'
import { findAccessibilityViolations } from './dashboard-support.js'
import { apiRequestsFrom, hasChromium, holdFirst, typeLikeAPerson } from './sdk-support.js'
import { html, shopServiceAndBrowser } from './vendor-shop.js'

/** The test site key that always blocks (sdk/README.md, "Browser tests"). */
const ALWAYS_BLOCKS = '2x00000000000000000000AB'

/** A Turnstile widget the service always turns away, after a field the keyboard starts from. */
function keyboardPages(service: string): Record<string, string> {
  return {
    '/turnstile-blocked': html(`
<label for="name">Name</label><input id="name">
<div class="cf-turnstile" data-sitekey="${ALWAYS_BLOCKS}"></div>
<script src="${service}/turnstile/v0/api.js" async defer></script>`),
  }
}

/** The focused element: its tag, id and classes, `BODY` when focus was lost. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement
    return element === null ? 'none' : `${element.tagName}${element.id === '' ? '' : `#${element.id}`}${Array.from(element.classList, (name) => `.${name}`).join('')}`
  })
}

/**
 * The SDK's forms and widgets, and the demo page, with the keyboard (WCAG 2.4.3 focus order, 2.5.8
 * target size, 1.4.11 a focus ring that stands out): what a visitor presses keeps the focus while
 * the SDK works and after it fails.
 */
describe.runIf(hasChromium())('the SDK and /demo with the keyboard in Chromium', () => {
  const suite = shopServiceAndBrowser(keyboardPages)

  it("keeps the focus on a form's submit button while it verifies and after a block, and a second press submits nothing", async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.evaluate((siteKey) => document.querySelector('#signup-form')?.setAttribute('data-site-key', siteKey), ALWAYS_BLOCKS)
    const requests = apiRequestsFrom(page)
    const verify = await holdFirst(page, '**/api/v1/verify')
    await typeLikeAPerson(page, '#signup-email', 'ada@example.com')
    await page.keyboard.press('Tab')
    expect(await focused(page)).toBe('BUTTON')
    await page.keyboard.press('Enter')
    await verify.arrived

    // Solving: the button keeps the focus, told busy and unavailable, and takes no second submit.
    const button = page.locator('#signup-form button[type="submit"]')
    expect(await focused(page)).toBe('BUTTON')
    expect(await button.evaluate((element: HTMLButtonElement) => [element.disabled, element.getAttribute('aria-disabled'), element.getAttribute('aria-busy')]))
      .toEqual([false, 'true', 'true'])
    await page.keyboard.press('Enter')
    // A click too (forced: Playwright waits for an aria-disabled button to be enabled).
    await button.click({ force: true })
    verify.release()

    await expect.poll(() => page.textContent('#signup-form [data-tollgate-status]')).toMatch(/^This request was blocked\./)
    expect(await focused(page)).toBe('BUTTON')
    expect(await button.evaluate((element) => [element.getAttribute('aria-disabled'), element.getAttribute('aria-busy')])).toEqual([null, null])
    expect(requests.filter((path) => path === '/api/v1/verify')).toHaveLength(1)
    expect(page.url()).toBe(`${suite.sdk.origin}/demo`)
  })

  it("keeps the focus in a widget when its Verify again button is pressed, and gives it back when the button returns, a target of 24 px or more", async () => {
    const { page } = await suite.browser.newPage()
    const first = await holdFirst(page, '**/api/v1/verify')
    await page.goto(`${suite.shop.origin}/turnstile-blocked`)
    await page.focus('#name')
    await first.arrived
    first.release()
    const retry = page.getByRole('button', { name: 'Verify again' })
    await retry.waitFor()
    // A failure the visitor did not ask for takes no focus from where they are.
    expect(await focused(page)).toBe('INPUT#name')
    expect(await retry.getAttribute('class')).toBe('tollgate-retry')
    expect((await retry.boundingBox())?.height).toBeGreaterThanOrEqual(24)

    await page.keyboard.press('Tab')
    expect(await focused(page)).toBe('BUTTON.tollgate-retry')
    const again = await holdFirst(page, '**/api/v1/verify')
    await page.keyboard.press('Enter')
    await again.arrived
    // The button is hidden while the run is on: the status line holds the focus meanwhile.
    expect(await retry.isHidden()).toBe(true)
    expect(await focused(page)).toBe('DIV.tollgate-status')
    again.release()
    await retry.waitFor()
    expect(await focused(page)).toBe('BUTTON.tollgate-retry')
  })

  it("draws the demo page's focus ring at 3:1 or more, and lets the keyboard scroll its code sample", async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.keyboard.press('Tab')
    expect(await focused(page)).toBe('INPUT#signup-email')
    const ring = await page.evaluate(() => {
      const style = getComputedStyle(document.activeElement ?? document.body)
      return { color: style.outlineColor, style: style.outlineStyle, width: parseFloat(style.outlineWidth) }
    })
    // Drawn at all: without a ring, outline-color is still the text's (currentColor), which passes the contrast below.
    expect(ring.style).not.toBe('none')
    expect(ring.width).toBeGreaterThan(0)
    // The section's white and the page's grey.
    for (const background of ['rgb(255, 255, 255)', 'rgb(246, 247, 249)']) {
      expect(contrastOf(ring.color, background), `${ring.color} on ${background}`).toBeGreaterThanOrEqual(3)
    }
    const sample = page.getByRole('region', { name: 'Code sample' })
    expect(await sample.evaluate((element) => [element.tagName, element.tabIndex])).toEqual(['PRE', 0])
    expect(await findAccessibilityViolations(page)).toEqual([])
  })
})
