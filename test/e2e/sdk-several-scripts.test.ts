/// <reference lib="dom" />
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { apiRequestsFrom, hasChromium } from './sdk-support.js'
import { html, shopServiceAndBrowser } from './vendor-shop.js'

/**
 * Pages that load more than one copy of the SDK: a page moving from Turnstile that has both its
 * widget (compat.js, at Turnstile's path) and a Tollgate form (tollgate.js), in either order, and
 * a page whose bundle binds the module build's forms beside the tag (a theme and a plugin).
 */
function pages(service: string, siteKey: string): Record<string, string> {
  const form = `
<form id="order" method="post" action="/order" data-tollgate>
  <input id="item" name="item" value="book">
  <button type="submit">Order</button>
</form>`
  const widget = `
<script>window.tokens = []; function onTurnstile(token) { window.tokens.push(token) }</script>
<div class="cf-turnstile" data-sitekey="${siteKey}" data-callback="onTurnstile"></div>`
  const compat = `<script src="${service}/turnstile/v0/api.js"></script>`
  const tag = `<script src="${service}/sdk/v1/tollgate.js" data-site-key="${siteKey}"></script>`
  return {
    '/compat-first': html(`${form}${widget}${compat}${tag}`),
    '/tollgate-first': html(`${form}${widget}${tag}${compat}`),
    '/tag-and-module': html(`${form}${tag}
<script type="module">
  import { bindForms } from '${service}/sdk/v1/tollgate.mjs'
  bindForms({ siteKey: '${siteKey}', apiUrl: '${service}' })
  window.moduleBound = true
</script>`),
  }
}

describe.runIf(hasChromium())('pages with several copies of the SDK in Chromium', () => {
  const suite = shopServiceAndBrowser(pages)

  function waitFor(page: Page, condition: string): Promise<unknown> {
    return page.waitForFunction(condition, undefined, { timeout: 20_000 })
  }

  /** Submits #order and gives the fields the shop got. */
  async function order(page: Page): Promise<Record<string, string> | undefined> {
    const before = suite.shop.orders.length
    await page.click('#order button')
    await page.waitForSelector('#ordered', { timeout: 20_000 })
    expect(suite.shop.orders).toHaveLength(before + 1)
    return suite.shop.orders.at(-1)
  }

  for (const path of ['/compat-first', '/tollgate-first']) {
    it(`${path}: window.Tollgate is tollgate.js's, which binds the form, and its reset() reaches the Turnstile widget too`, async () => {
      const { page, events } = await suite.browser.newPage()
      await page.goto(`${suite.shop.origin}${path}`)
      await waitFor(page, 'window.tokens.length > 0')
      expect(await page.evaluate(() => [typeof window.Tollgate.bindForms, typeof window.Tollgate.execute, window.Tollgate.version])).toEqual(['function', 'function', '1.0.0'])

      // One reset() clears both copies' work: the widget's token goes, and it gets a new one by itself.
      const cleared = await page.evaluate(() => {
        window.Tollgate.reset()
        return [(window as unknown as { turnstile: { getResponse(): string | undefined } }).turnstile.getResponse(), document.querySelector<HTMLInputElement>('input[name="cf-turnstile-response"]')?.value]
      })
      expect(cleared).toEqual([undefined, ''])
      await waitFor(page, 'window.tokens.length > 1')

      const posted = await order(page)
      expect(Object.keys(posted ?? {})).toEqual(['item', 'tollgate-token'])
      expect(await suite.sdk.siteverify(posted?.['tollgate-token'] ?? '')).toMatchObject({ success: true })
      expect(events.errors).toEqual([])
    })
  }

  it('verifies a form once when the tag and the module build both bind it: one challenge, one verification, one submit', async () => {
    const { page, events } = await suite.browser.newPage()
    const requests = apiRequestsFrom(page)
    await page.goto(`${suite.shop.origin}/tag-and-module`)
    await waitFor(page, 'window.moduleBound === true && typeof window.Tollgate === "object"')
    // The first touch starts the early solve: of one copy only.
    await page.click('#item')
    await expect.poll(() => requests).toEqual(['/api/v1/challenge'])
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(requests).toEqual(['/api/v1/challenge'])

    const posted = await order(page)
    expect(requests).toEqual(['/api/v1/challenge', '/api/v1/verify'])
    expect(Object.keys(posted ?? {})).toEqual(['item', 'tollgate-token'])
    expect(await suite.sdk.siteverify(posted?.['tollgate-token'] ?? '')).toMatchObject({ success: true })
    expect(events.errors).toEqual([])
  })
})
