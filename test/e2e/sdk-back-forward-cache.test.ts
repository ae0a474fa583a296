/// <reference lib="dom" />
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apiRequestsFrom, hasChromium, launchBrowser, startSdkService, type SdkService, type TestBrowser } from './sdk-support.js'
import { startShop, type Shop } from './vendor-shop.js'

/*
 * A visitor submits a form, presses Back, and gets the page from the back/forward cache as they
 * left it: the field the form posted still holds its token, which Siteverify redeems once. The
 * site is its own server on another origin (vendor-shop.ts), which records what its forms post;
 * its pages count the restores they see.
 */

/** A page that records its restores from the back/forward cache and what its widget's callbacks hear. */
function html(body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<script>
  window.restores = 0; window.tokens = []; window.expired = 0
  addEventListener('pageshow', function (event) { if (event.persisted) window.restores += 1 })
  function onToken(token) { window.tokens.push(token) }
  function onExpired() { window.expired += 1 }
</script></head><body>${body}</body></html>`
}

function shopPages(service: string, siteKey: string): Record<string, string> {
  return {
    // Turnstile's implicit rendering in a form (developers.cloudflare.com/turnstile).
    '/turnstile': html(`
<form id="order" method="post" action="/order">
  <input name="item" value="book">
  <div class="cf-turnstile" data-sitekey="${siteKey}" data-callback="onToken" data-expired-callback="onExpired"></div>
  <button type="submit">Order</button>
</form>
<script src="${service}/turnstile/v0/api.js" async defer></script>`),
    // Turnstile executed on submit, its callback posting the form.
    '/turnstile-execute': html(`
<form id="order" method="post" action="/order">
  <input name="item" value="lamp">
  <div class="cf-turnstile" data-sitekey="${siteKey}" data-execution="execute" data-callback="onSubmitToken" data-expired-callback="onExpired"></div>
  <button type="submit">Order</button>
</form>
<script>
  function onSubmitToken(token) { onToken(token); document.getElementById('order').submit() }
  document.getElementById('order').addEventListener('submit', function (event) { event.preventDefault(); turnstile.execute('.cf-turnstile') })
</script>
<script src="${service}/turnstile/v0/api.js" async defer></script>`),
    // The SDK's own script on a form[data-tollgate] (sdk/README.md section 1).
    '/native': html(`
<form id="order" method="post" action="/order" data-tollgate>
  <input name="item" value="pen">
  <button type="submit">Order</button>
</form>
<script src="${service}/sdk/v1/tollgate.js" data-site-key="${siteKey}" async defer></script>`),
  }
}

interface PageRecord {
  restores: number
  tokens: string[]
  expired: number
}

describe.runIf(hasChromium())('a page restored from the back/forward cache in Chromium', () => {
  let sdk: SdkService
  let browser: TestBrowser
  let shop: Shop

  beforeAll(async () => {
    sdk = await startSdkService()
    shop = await startShop(shopPages(sdk.origin, sdk.demoSite.siteKey))
    browser = await launchBrowser({ keepsPagesInBackForwardCache: true })
  })
  afterAll(async () => {
    await browser?.close()
    shop?.server.close()
    await sdk?.close()
  })

  function waitFor(page: Page, condition: string): Promise<unknown> {
    return page.waitForFunction(condition, undefined, { timeout: 20_000 })
  }

  function recordOf(page: Page): Promise<PageRecord> {
    return page.evaluate(() => {
      const { restores, tokens, expired } = window as unknown as PageRecord
      return { restores, tokens, expired }
    })
  }

  function fieldOf(page: Page, name: string): Promise<string | undefined> {
    return page.evaluate((fieldName) => document.querySelector<HTMLInputElement>(`input[name="${fieldName}"]`)?.value, name)
  }

  /** Orders, lands on the thank-you page, and comes back with the browser's Back: from the cache, or the test says why not. */
  async function orderAndGoBack(page: Page): Promise<Record<string, string>> {
    const ordered = shop.orders.length
    const { restores } = await recordOf(page)
    await page.click('#order button')
    await page.waitForSelector('#ordered')
    expect(shop.orders).toHaveLength(ordered + 1)
    await page.goBack({ waitUntil: 'commit' })
    await page.waitForSelector('#order')
    const record = await recordOf(page)
    const notRestored = await page.evaluate(() => JSON.stringify((performance.getEntriesByType('navigation')[0] as { notRestoredReasons?: unknown } | undefined)?.notRestoredReasons ?? null))
    expect(record.restores, `not restored from the back/forward cache: ${notRestored}`).toBe(restores + 1)
    return shop.orders.at(-1) ?? {}
  }

  it('drops a Turnstile widget\'s posted token when the page comes back, tells the expired callback, and gets a fresh one that Siteverify accepts', async () => {
    const { page, events } = await browser.newPage()
    await page.goto(`${shop.origin}/turnstile`)
    await waitFor(page, 'window.tokens.length > 0')
    const [used] = (await recordOf(page)).tokens

    const posted = await orderAndGoBack(page)
    expect(posted).toEqual({ item: 'book', 'cf-turnstile-response': used })
    expect(await sdk.siteverify(used ?? '')).toMatchObject({ success: true })
    // The visitor may press Order again at once: the used token is gone from the field already.
    expect(await fieldOf(page, 'cf-turnstile-response')).not.toBe(used)

    await waitFor(page, 'window.tokens.length > 1')
    const { tokens, expired } = await recordOf(page)
    const fresh = tokens[1] ?? ''
    expect(fresh).not.toBe(used)
    expect(expired).toBe(1)
    expect(await fieldOf(page, 'cf-turnstile-response')).toBe(fresh)
    expect(await page.evaluate(() => (window as unknown as { turnstile: { getResponse(): string | undefined } }).turnstile.getResponse())).toBe(fresh)

    const reposted = await orderAndGoBack(page)
    expect(reposted['cf-turnstile-response']).toBe(fresh)
    expect(await sdk.siteverify(fresh)).toMatchObject({ success: true })
    expect(events.errors).toEqual([])
  })

  it('empties a widget executed on submit and leaves it waiting for the next execute(), which posts a fresh token', async () => {
    const { page, events } = await browser.newPage()
    await page.goto(`${shop.origin}/turnstile-execute`)
    await waitFor(page, 'typeof window.turnstile === "object"')

    const posted = await orderAndGoBack(page)
    const used = posted['cf-turnstile-response'] ?? ''
    expect(used).not.toBe('')
    expect(await fieldOf(page, 'cf-turnstile-response')).toBe('')
    expect((await recordOf(page)).expired).toBe(1)
    // execution: 'execute' waits for the page: nothing is solved by itself.
    const requests = apiRequestsFrom(page)
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(requests).toEqual([])

    await page.click('#order button')
    await page.waitForSelector('#ordered')
    const fresh = shop.orders.at(-1)?.['cf-turnstile-response'] ?? ''
    expect(fresh).not.toBe(used)
    expect(await sdk.siteverify(used)).toMatchObject({ success: true })
    expect(await sdk.siteverify(fresh)).toMatchObject({ success: true })
    expect(events.errors).toEqual([])
  })

  it('posts a fresh token from a form[data-tollgate] after Back, as the SDK gets one on every submit', async () => {
    const { page, events } = await browser.newPage()
    await page.goto(`${shop.origin}/native`)
    await waitFor(page, 'typeof window.Tollgate === "object"')

    const used = (await orderAndGoBack(page))['tollgate-token'] ?? ''
    expect(used).not.toBe('')
    expect(await sdk.siteverify(used)).toMatchObject({ success: true })

    await page.click('#order button')
    await page.waitForSelector('#ordered')
    const fresh = shop.orders.at(-1)?.['tollgate-token'] ?? ''
    expect(fresh).not.toBe('')
    expect(fresh).not.toBe(used)
    expect(await sdk.siteverify(fresh)).toMatchObject({ success: true })
    expect(events.errors).toEqual([])
  })
})
