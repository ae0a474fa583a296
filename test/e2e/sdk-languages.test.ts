/// <reference lib="dom" />
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ar } from '../../sdk/src/translations/ar.js'
import { de } from '../../sdk/src/translations/de.js'
import { es } from '../../sdk/src/translations/es.js'
import { fr } from '../../sdk/src/translations/fr.js'
import { he } from '../../sdk/src/translations/he.js'
import { pt } from '../../sdk/src/translations/pt.js'
import { english } from '../../sdk/src/strings.js'
import { hasChromium, serviceAndBrowser } from './sdk-support.js'

/** Waits a moment before letting a request through (a slow network for the translations). */
const slowly = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds))

describe.runIf(hasChromium())("the SDK's texts in the visitor's language, in Chromium", () => {
  const suite = serviceAndBrowser()
  /** The site: another origin than the service's (`localhost`, the service being `127.0.0.1`), serving the page of the test. */
  let shopPage = ''
  const shop = createServer((_request, response) => void response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(shopPage))
  let shopOrigin = ''
  beforeAll(async () => {
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve))
    shopOrigin = `http://localhost:${(shop.address() as AddressInfo).port}`
  })
  afterAll(() => {
    shop.closeAllConnections()
    shop.close()
  })

  /**
   * Opens `body` as a page of the shop in `lang` (none: no attribute), with the browser's
   * `locale`; every text the page's status lines showed is recorded in `window.shown`, in order.
   * The translations are answered `delayMs` late, so that a first text that did not wait for its
   * language would show English first.
   */
  async function openShop(lang: string | undefined, body: string, options: { locale?: string; delayMs?: number; failTranslations?: boolean; dir?: string } = {}): Promise<{ page: Page; errors: string[] }> {
    const { page, events } = await suite.browser.newPage({ locale: options.locale ?? 'en-US' })
    await page.addInitScript(() => {
      const shown: string[] = []
      Object.assign(window, { shown })
      new MutationObserver(() => {
        for (const status of Array.from(document.querySelectorAll('.tollgate-status'))) {
          const text = status.textContent ?? ''
          if (text !== '' && shown.at(-1) !== text) shown.push(text)
        }
      }).observe(document, { subtree: true, childList: true, characterData: true })
    })
    await page.route('**/sdk/v1/strings/*', async (route) => {
      if (options.failTranslations === true) return route.abort('connectionrefused')
      await slowly(options.delayMs ?? 0)
      return route.continue()
    })
    shopPage = `<!doctype html><html${lang === undefined ? '' : ` lang="${lang}"`}${options.dir === undefined ? '' : ` dir="${options.dir}"`}><head><meta charset="utf-8"><title>Shop</title></head><body>${body}</body></html>`
    await page.goto(`${shopOrigin}/page`)
    return { page, errors: events.errors }
  }

  /** A protected form whose submit the page keeps (it records the token instead of leaving). */
  function form(attributes = ''): string {
    const { origin, demoSite } = suite.sdk
    return `
<form id="order" method="post" action="/order" data-tollgate ${attributes}>
  <input name="item" value="book"><button type="submit">Order</button>
</form>
<script>document.getElementById('order').addEventListener('submit', (event) => event.preventDefault())</script>
<script src="${origin}/sdk/v1/tollgate.js" data-site-key="${demoSite.siteKey}" async defer></script>`
  }

  /** Submits #order at once, waits for its token, and answers the texts its status line showed. */
  async function submitAndWait(page: Page): Promise<string[]> {
    await page.waitForFunction(() => 'Tollgate' in window)
    await page.click('#order button')
    await page.waitForFunction(() => document.querySelector('#order input[name="tollgate-token"]')?.getAttribute('value') !== null
      && (document.querySelector<HTMLInputElement>('#order input[name="tollgate-token"]')?.value ?? '') !== '', undefined, { timeout: 25_000 })
    const shown = () => page.evaluate(() => (window as unknown as { shown: string[] }).shown)
    await expect.poll(async () => (await shown()).length).toBeGreaterThan(0)
    return shown()
  }

  it('speaks German on a page in German, and shows no English while its texts are on their way', async () => {
    const { page, errors } = await openShop('de', form(), { delayMs: 800 })
    const shown = await submitAndWait(page)
    // The texts asked for while the translation was on its way wait for it (the latest of them is shown).
    expect(shown.filter((text) => Object.values(english).includes(text))).toEqual([])
    expect(shown.at(-1)).toBe(de.verified)
    expect(errors).toEqual([])
  })

  it("speaks the form's own data-lang, French on a German page", async () => {
    const { page } = await openShop('de', form('data-lang="fr"'))
    expect((await submitAndWait(page)).at(-1)).toBe(fr.verified)
  })

  it('speaks the page\'s language, not the browser\'s, and the browser\'s (its region dropped) on a page that does not say', async () => {
    const french = await openShop('fr', form(), { locale: 'en-US' })
    expect((await submitAndWait(french.page)).at(-1)).toBe(fr.verified)
    const unsaid = await openShop(undefined, form(), { locale: 'pt-BR' })
    expect((await submitAndWait(unsaid.page)).at(-1)).toBe(pt.verified)
  })

  it("keeps the site's own texts over the translation that arrives after them", async () => {
    const { page } = await openShop('de', `<script type="application/json" data-tollgate-strings>{ "verified": "Alles klar, danke!" }</script>${form()}`, { delayMs: 800 })
    // However long the verification takes beside the translation's 800 ms: German or the site's, never English, the site's last.
    const shown = await submitAndWait(page)
    for (const text of shown) expect([...Object.values(de), 'Alles klar, danke!']).toContain(text)
    expect(shown.at(-1)).toBe('Alles klar, danke!')
    // The other texts are the translation's.
    expect(await page.evaluate(() => {
      window.Tollgate.reset()
      return new Promise<string>((resolve) => {
        document.querySelector('#order')?.setAttribute('data-site-key', 'tgk_unknown')
        document.querySelector<HTMLButtonElement>('#order button')?.click()
        document.addEventListener('tollgate:error', () => setTimeout(() => resolve(document.querySelector('#order .tollgate-status')?.textContent ?? ''), 100))
      })
    })).toBe(de.misconfigured)
  })

  /** The language and direction the status line of #order is read in. */
  const statusOf = (page: Page) => page.evaluate(() => {
    const element = document.querySelector<HTMLElement>('#order .tollgate-status')
    return element === null ? null : { lang: element.lang, direction: getComputedStyle(element).direction }
  })

  it('speaks Arabic on an Arabic page, right to left, and Hebrew on a Hebrew one', async () => {
    const { page, errors } = await openShop('ar', form(), { dir: 'rtl', locale: 'en-US' })
    expect((await submitAndWait(page)).at(-1)).toBe(ar.verified)
    expect(await statusOf(page)).toEqual({ lang: 'ar', direction: 'rtl' })
    expect(errors).toEqual([])
    // Right to left from the form's own data-lang, on a page that is not.
    const hebrew = await openShop('en', form('data-lang="he"'), { locale: 'en-US' })
    expect((await submitAndWait(hebrew.page)).at(-1)).toBe(he.verified)
    expect(await statusOf(hebrew.page)).toEqual({ lang: 'he', direction: 'rtl' })
  })

  it("writes the site's own Arabic texts right to left and labelled Arabic, though the translation never came", async () => {
    const own = 'تم التحقق، شكرًا لك.'
    const { page } = await openShop('ar', `<script type="application/json" data-tollgate-strings>{ "verified": "${own}" }</script>${form()}`, { dir: 'rtl', failTranslations: true })
    expect((await submitAndWait(page)).at(-1)).toBe(own)
    expect(await statusOf(page)).toEqual({ lang: 'ar', direction: 'rtl' })
  })

  it('writes its English status left to right on a right-to-left page in a language it does not speak, its ellipsis at the end', async () => {
    const { page } = await openShop('ur', form(), { dir: 'rtl', locale: 'en-US' })
    expect((await submitAndWait(page)).at(-1)).toBe(english.verified)
    expect(await statusOf(page)).toEqual({ lang: 'en', direction: 'ltr' })
  })

  it('verifies in English, without an error, when the translations cannot be fetched', async () => {
    const { page, errors } = await openShop('de', form(), { failTranslations: true })
    expect((await submitAndWait(page)).at(-1)).toBe(english.verified)
    // Chromium reports the refused request itself; the SDK reports nothing as an error.
    expect(errors.filter((error) => !error.startsWith('Failed to load resource'))).toEqual([])
  })

  it("speaks the language a Turnstile widget was rendered with, and reCAPTCHA's and hCaptcha's hl", async () => {
    const { origin, demoSite } = suite.sdk
    const { page } = await openShop('en', `
<div id="box"></div>
<script>window.onloadTurnstile = () => turnstile.render('#box', { sitekey: '${demoSite.siteKey}', language: 'es' })</script>
<script src="${origin}/turnstile/v0/api.js?render=explicit&onload=onloadTurnstile" async defer></script>`)
    await expect.poll(() => page.textContent('#box .tollgate-status'), { timeout: 25_000 }).toBe(es.verified)
    const hcaptcha = await openShop('en', `
<div class="h-captcha" data-sitekey="${demoSite.siteKey}"></div>
<script src="${origin}/1/api.js?hl=fr" async defer></script>`)
    await expect.poll(() => hcaptcha.page.textContent('.h-captcha .tollgate-status'), { timeout: 25_000 }).toBe(fr.verified)
  })
})
