/// <reference lib="dom" />
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import type { TurnstileApi } from '../../sdk/src/compat/turnstile.js'
import { testSecrets } from '../../src/domain/siteverify/test-secrets.js'
import { apiRequestsFrom, hasChromium, holdFirst } from './sdk-support.js'
import { html, shopServiceAndBrowser } from './vendor-shop.js'

declare global {
  interface Window {
    turnstile?: TurnstileApi
  }
}

/** A page under a Content-Security-Policy (a meta element: the shop sends no header). */
function withPolicy(policy: string, body: string): string {
  return html(body).replace('<title>', `<meta http-equiv="Content-Security-Policy" content="${policy}"><title>`)
}

/** A .cf-turnstile widget whose callbacks record its token or its error codes. */
function turnstileWithCallbacks(service: string, siteKey: string): string {
  return `
<script>window.failures = []; function onToken(token) { window.token = token } function onFailure(code, error) { window.failures.push([code, error && error.code]); return true }</script>
<div class="cf-turnstile" data-sitekey="${siteKey}" data-callback="onToken" data-error-callback="onFailure" data-retry="never"></div>
<script src="${service}/turnstile/v0/api.js" async defer></script>`
}

/** The pages, as each vendor's documentation writes them, with the script from `service` and the key `siteKey`. */
function vendorPages(service: string, siteKey: string, unknownKey: string): Record<string, string> {
  return {
    // Turnstile, implicit rendering (developers.cloudflare.com/turnstile, client-side rendering).
    '/turnstile-implicit': html(`
<script>window.tokens = []; function onTurnstile(token) { window.tokens.push(token) }</script>
<form id="order" method="post" action="/order">
  <input name="item" value="book">
  <div class="cf-turnstile" data-sitekey="${siteKey}" data-action="checkout" data-cdata="order-7" data-callback="onTurnstile"></div>
  <button type="submit">Order</button>
</form>
<script src="${service}/turnstile/v0/api.js" async defer></script>`),
    // Turnstile, explicit rendering with the onload hook and execution on demand.
    '/turnstile-explicit': html(`
<script>
  window.events = []
  window.onloadTurnstile = function () {
    window.widgetId = turnstile.render('#box', {
      sitekey: '${siteKey}',
      execution: 'execute',
      callback: function (token) { window.events.push(['token', token]) },
    })
    window.events.push(['rendered', window.widgetId])
  }
</script>
<div id="box"></div>
<script src="${service}/turnstile/v0/api.js?render=explicit&onload=onloadTurnstile" defer></script>`),
    // Turnstile's default on expiry: the expired callback, then a fresh token by itself.
    '/turnstile-expiry': html(`
<script>window.events = []; function onToken(token) { window.events.push(['token', token]) } function onExpired() { window.events.push(['expired', turnstile.getResponse() || '', turnstile.isExpired()]) }</script>
<div class="cf-turnstile" data-sitekey="${siteKey}" data-callback="onToken" data-expired-callback="onExpired"></div>
<script src="${service}/turnstile/v0/api.js" async defer></script>`),
    // Turnstile with a site key the service does not know: the error callback hears of it.
    '/turnstile-unknown-key': html(`
<script>window.failures = []; function onFailure(code, error) { window.failures.push([code, error && error.code]); return true }</script>
<div class="cf-turnstile" data-sitekey="${unknownKey}" data-error-callback="onFailure"></div>
<script src="${service}/turnstile/v0/api.js" async defer></script>`),
    // reCAPTCHA v3 (developers.google.com/recaptcha/docs/v3): ready, then execute with an action.
    '/recaptcha-v3': html(`<script src="${service}/recaptcha/api.js?render=${siteKey}"></script>`),
    // reCAPTCHA v3's form pattern, unchanged, on the test site key that always blocks: Google's
    // gives every visitor a token, so the page posts whatever execute resolves to.
    '/recaptcha-v3-blocked': html(`
<script src="${service}/recaptcha/api.js?render=2x00000000000000000000AB"></script>
<form id="order" method="post" action="/order">
  <input type="hidden" name="g-recaptcha-response" id="response">
  <input name="item" value="vase">
  <button type="submit">Order</button>
</form>
<script>
  document.getElementById('order').addEventListener('submit', function (event) {
    event.preventDefault()
    grecaptcha.ready(function () {
      grecaptcha.execute('2x00000000000000000000AB', { action: 'submit' }).then(function (token) {
        document.getElementById('response').value = token
        document.getElementById('order').submit()
      })
    })
  })
</script>`),
    // reCAPTCHA bound to the form's button, in Google's markup (developers.google.com/recaptcha/docs/v3, "automatically bind"; no data-size).
    '/recaptcha-invisible': html(`
<script>function onSubmit(token) { document.getElementById('order').submit() }</script>
<form id="order" method="post" action="/order">
  <input name="item" value="lamp">
  <button class="g-recaptcha" data-sitekey="${siteKey}" data-callback="onSubmit" data-action="submit">Order</button>
</form>
<script src="${service}/recaptcha/api.js" async defer></script>`),
    // hCaptcha (docs.hcaptcha.com): a checkbox in a form, and its reCAPTCHA compatibility.
    '/hcaptcha': html(`
<form id="order" method="post" action="/order">
  <input name="item" value="pen">
  <div class="h-captcha" data-sitekey="${siteKey}" data-callback="onHcaptcha"></div>
  <button type="submit">Order</button>
</form>
<script>window.tokens = []; function onHcaptcha(token) { window.tokens.push(token) }</script>
<script src="${service}/1/api.js" async defer></script>`),
    // hCaptcha's invisible widget rendered by code, its token awaited with execute({ async: true }).
    '/hcaptcha-async': html(`
<div id="box"></div>
<script>window.onloadHcaptcha = function () { window.widgetId = hcaptcha.render('box', { sitekey: '${siteKey}', size: 'invisible' }) }</script>
<script src="${service}/1/api.js?render=explicit&onload=onloadHcaptcha&recaptchacompat=off" async defer></script>`),
    // Each vendor's public test site key, which a moved page's browser tests may still carry.
    '/turnstile-test-key': html(`
<div class="cf-turnstile" data-sitekey="3x00000000000000000000FF" data-action="checkout" data-callback="onToken"></div>
<script>function onToken(token) { window.token = token }</script>
<script src="${service}/turnstile/v0/api.js" async defer></script>`),
    '/recaptcha-test-key': html(`
<div class="g-recaptcha" data-sitekey="6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI" data-callback="onToken"></div>
<script>function onToken(token) { window.token = token }</script>
<script src="${service}/recaptcha/api.js" async defer></script>`),
    '/hcaptcha-test-key': html(`
<div class="h-captcha" data-sitekey="10000000-ffff-ffff-ffff-000000000001" data-callback="onToken"></div>
<script>function onToken(token) { window.token = token }</script>
<script src="${service}/1/api.js" async defer></script>`),
    // Turnstile's Content-Security-Policy (developers.cloudflare.com/turnstile, "Content Security
    // Policy") with the host changed, as it is and with the additions sdk/README.md section 9 gives.
    '/turnstile-vendor-csp': withPolicy(`script-src 'self' 'unsafe-inline' ${service}; frame-src ${service}`, turnstileWithCallbacks(service, siteKey)),
    '/turnstile-vendor-csp-completed': withPolicy(`script-src 'self' 'unsafe-inline' ${service} 'wasm-unsafe-eval'; worker-src blob:; frame-src ${service}`, turnstileWithCallbacks(service, siteKey)),
    // hCaptcha's policy names connect-src too: the service's host there is enough.
    '/hcaptcha-vendor-csp-completed': withPolicy(`script-src 'self' 'unsafe-inline' ${service} 'wasm-unsafe-eval'; worker-src blob:; frame-src ${service}; style-src 'self' 'unsafe-inline' ${service}; connect-src ${service}`, `
<div class="h-captcha" data-sitekey="${siteKey}" data-callback="onToken"></div>
<script>function onToken(token) { window.token = token }</script>
<script src="${service}/1/api.js" async defer></script>`),
    // ALTCHA's and Friendly Captcha's markup, which compat.js does not serve, with its script host changed.
    '/altcha': html(`
<form method="post" action="/order"><altcha-widget challengeurl="${service}/altcha/challenge"></altcha-widget><button type="submit">Order</button></form>
<script src="${service}/sdk/v1/compat.js" async defer></script>`),
    '/friendly-captcha': html(`
<form method="post" action="/order"><div class="frc-captcha" data-sitekey="${siteKey}"></div><button type="submit">Order</button></form>
<script src="${service}/sdk/v1/compat.js" async defer></script>`),
    // Every vendor's API at once, nothing rendered by itself.
    '/compat-explicit': html(`
<div id="plain"></div><div id="second"></div><div id="third"></div>
<script src="${service}/sdk/v1/compat.js?render=explicit"></script>`),
    // Turnstile's own reCAPTCHA compatibility mode: reCAPTCHA's markup on Turnstile's script.
    '/turnstile-compat-recaptcha': html(`
<form id="order" method="post" action="/order">
  <div class="g-recaptcha" data-sitekey="${siteKey}" data-callback="onToken"></div>
</form>
<script>function onToken(token) { window.token = token }</script>
<script src="${service}/turnstile/v0/api.js?compat=recaptcha" async defer></script>`),
    // Google's snippet for loading reCAPTCHA asynchronously: a stub whose ready() queues in ___grecaptcha_cfg.fns.
    '/recaptcha-async-snippet': html(`
<script>
  if (typeof grecaptcha === 'undefined') { grecaptcha = {} }
  grecaptcha.ready = function (callback) {
    if (typeof grecaptcha.render === 'undefined') {
      const c = '___grecaptcha_cfg'
      window[c] = window[c] || {}
      ;(window[c]['fns'] = window[c]['fns'] || []).push(callback)
    } else callback()
  }
  grecaptcha.ready(function () { grecaptcha.execute('${siteKey}', { action: 'homepage' }).then(function (token) { window.queuedToken = token }) })
</script>
<script src="${service}/recaptcha/api.js?render=${siteKey}" async></script>`),
    // A container whose id is the vendor's name (a global by the browser's rules), one element
    // without a site key before a good one, and a callback that throws.
    '/hcaptcha-awkward': html(`
<div class="h-captcha" id="broken"></div>
<form id="order" method="post" action="/order">
  <div id="hcaptcha" class="h-captcha" data-sitekey="${siteKey}" data-callback="onToken"></div>
</form>
<script>function onToken(token) { window.token = token; throw new Error("the page's own bug") }</script>
<script src="${service}/1/api.js" async defer></script>`),
    // The script in the head, loaded as it is met: its onload renders an element further down.
    '/turnstile-in-head': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<script>window.onloadTurnstile = function () { window.widgetId = turnstile.render('#later', { sitekey: '${siteKey}', callback: function (token) { window.token = token } }) }</script>
<script src="${service}/turnstile/v0/api.js?render=explicit&onload=onloadTurnstile"></script>
</head><body><div id="later"></div></body></html>`,
    // A page that still loads the vendor's own script keeps it: compat.js defines what is missing only.
    '/vendor-still-there': html(`
<script>window.turnstile = { vendor: 'cloudflare', render: function () {} }</script>
<script src="${service}/sdk/v1/compat.js"></script>`),
  }
}

describe.runIf(hasChromium())('the vendors\' page APIs (compat.js) in Chromium', () => {
  const suite = shopServiceAndBrowser(vendorPages)

  /** Redeems a token the way a backend written for the vendor does: a form post to the vendor's Siteverify path. */
  async function redeemAtVendorPath(path: string, token: string, secret: string = suite.sdk.demoSite.secretKey) {
    const response = await suite.sdk.service.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ secret, response: token }).toString(),
    })
    return response.json<{ success: boolean; action?: string; cdata?: string; 'error-codes': string[] }>()
  }

  /** The expiry page under a clock the test moves, once its widget has its first token. */
  async function openExpiryPageWithAClock(): Promise<Page> {
    const { page } = await suite.browser.newPage()
    await page.clock.install()
    await page.goto(`${suite.shop.origin}/turnstile-expiry`)
    await waitFor(page, 'window.events.length > 0')
    return page
  }

  async function open(path: string): Promise<{ page: Page; errors: string[] }> {
    const { page, events } = await suite.browser.newPage()
    await page.goto(`${suite.shop.origin}${path}`)
    return { page, errors: events.errors }
  }

  function waitFor(page: Page, condition: string): Promise<unknown> {
    return page.waitForFunction(condition, undefined, { timeout: 20_000 })
  }

  /** waitFor on a page whose policy forbids eval, which a condition given as a string needs. */
  function waitUnderPolicy(page: Page, condition: () => boolean): Promise<unknown> {
    return page.waitForFunction(condition, undefined, { timeout: 20_000 })
  }

  it('renders a .cf-turnstile element by itself: the callback gets a token, the form posts it as cf-turnstile-response, Siteverify answers its action and cData', async () => {
    const { page, errors } = await open('/turnstile-implicit')
    await waitFor(page, 'window.tokens.length > 0')
    const token = await page.evaluate(() => (window as unknown as { tokens: string[] }).tokens[0] ?? '')
    expect(await page.evaluate(() => window.turnstile?.getResponse())).toBe(token)
    expect(await page.evaluate(() => window.turnstile?.isExpired())).toBe(false)

    await page.click('#order button')
    await page.waitForSelector('#ordered')
    expect(suite.shop.orders.at(-1)).toEqual({ item: 'book', 'cf-turnstile-response': token })
    expect(await redeemAtVendorPath('/turnstile/v0/siteverify', token)).toMatchObject({ success: true, action: 'checkout', cdata: 'order-7' })
    expect(errors).toEqual([])
  })

  it('gets a new token after a reset (a page whose submit was refused), and a second render of the container is the first widget', async () => {
    const { page } = await open('/turnstile-implicit')
    await waitFor(page, 'window.tokens.length > 0')
    const ids = await page.evaluate(() => {
      const box = document.querySelector<HTMLElement>('.cf-turnstile')
      const first = window.turnstile?.render(box as HTMLElement, {})
      return [first, window.turnstile?.render(box as HTMLElement, {}), document.querySelectorAll('input[name="cf-turnstile-response"]').length]
    })
    expect(ids[0]).toMatch(/^tollgate-turnstile-\d+$/)
    expect(ids.slice(1)).toEqual([ids[0], 1])
    await page.evaluate(() => window.turnstile?.reset())
    await waitFor(page, 'window.tokens.length > 1')
    const [first, second] = await page.evaluate(() => (window as unknown as { tokens: string[] }).tokens)
    expect(second).not.toBe(first)
    expect(await page.evaluate(() => window.turnstile?.getResponse())).toBe(second)
    expect(await redeemAtVendorPath('/turnstile/v0/siteverify', second ?? '')).toMatchObject({ success: true })
  })

  it('renders explicitly from the onload hook, gets the token when the page executes the widget, and reset and remove undo it', async () => {
    const { page } = await open('/turnstile-explicit')
    await waitFor(page, 'window.events.length > 0')
    const widgetId = await page.evaluate(() => (window as unknown as { widgetId: string }).widgetId)
    expect(widgetId).toMatch(/^tollgate-turnstile-\d+$/)
    // execution: 'execute' waits for the page.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(await page.evaluate(() => (window as unknown as { events: unknown[] }).events)).toEqual([['rendered', widgetId]])

    await page.evaluate(() => window.turnstile?.execute('#box'))
    await waitFor(page, 'window.events.length > 1')
    const token = await page.evaluate(() => (window as unknown as { events: [string, string][] }).events[1]?.[1] ?? '')
    expect(await page.evaluate((id) => window.turnstile?.getResponse(id), widgetId)).toBe(token)
    expect(await page.evaluate(() => document.querySelector<HTMLInputElement>('#box input[name="cf-turnstile-response"]')?.value)).toBe(token)

    await page.evaluate((id) => window.turnstile?.reset(id), widgetId)
    expect(await page.evaluate(() => window.turnstile?.getResponse())).toBeUndefined()
    expect(await page.evaluate(() => document.querySelector<HTMLInputElement>('#box input[name="cf-turnstile-response"]')?.value)).toBe('')
    await page.evaluate((id) => window.turnstile?.remove(id), widgetId)
    expect(await page.evaluate(() => document.querySelectorAll('#box input').length)).toBe(0)
    expect(await redeemAtVendorPath('/turnstile/v0/siteverify', token)).toMatchObject({ success: true })
  })

  it('tells the expired callback before the token\'s 300 s are up, and then gets a fresh token by itself', async () => {
    const page = await openExpiryPageWithAClock()
    await page.clock.fastForward(294_000)
    expect(await page.evaluate(() => (window as unknown as { events: unknown[] }).events.length)).toBe(1)
    await page.clock.fastForward(1_500)
    await waitFor(page, 'window.events.length > 2')
    const [first, expired, second] = await page.evaluate(() => (window as unknown as { events: [string, string, boolean?][] }).events)
    expect(first?.[0]).toBe('token')
    expect(expired).toEqual(['expired', '', true])
    expect(second?.[0]).toBe('token')
    expect(second?.[1]).not.toBe(first?.[1])
    expect(await page.evaluate(() => window.turnstile?.isExpired())).toBe(false)
    expect(await page.evaluate(() => document.querySelector<HTMLInputElement>('input[name="cf-turnstile-response"]')?.value)).toBe(second?.[1])
    expect(await suite.sdk.siteverify(second?.[1] ?? '')).toMatchObject({ success: true })
  })

  it('expires a token that went overdue while timers slept (a laptop\'s lid closed) as soon as the page is shown again', async () => {
    const page = await openExpiryPageWithAClock()
    // The clock moves on and no timer fires: the tab slept.
    await page.clock.setSystemTime(Date.now() + 301_000)
    expect(await page.evaluate(() => (window as unknown as { events: unknown[] }).events.length)).toBe(1)
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')))
    await waitFor(page, 'window.events.length > 2')
    const [, expired, fresh] = await page.evaluate(() => (window as unknown as { events: [string, string, boolean?][] }).events)
    expect(expired).toEqual(['expired', '', true])
    expect(await suite.sdk.siteverify(fresh?.[1] ?? '')).toMatchObject({ success: true })
  })

  it('lets a widget go whose container left the page (a single-page app\'s view changed): it solves no more', async () => {
    const page = await openExpiryPageWithAClock()
    const requests = apiRequestsFrom(page)
    await page.evaluate(() => document.querySelector('.cf-turnstile')?.remove())
    await page.clock.fastForward(300_000)
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(requests).toEqual([])
    expect(await page.evaluate(() => (window as unknown as { events: unknown[] }).events.length)).toBe(1)
  })

  it('stops a widget\'s run when its container leaves the page while it solves (a single-page app\'s view changed without remove())', async () => {
    const { page, events } = await suite.browser.newPage()
    const challenge = await holdFirst(page, '**/api/v1/challenge')
    const cancelled: string[] = []
    page.on('requestfailed', (request) => cancelled.push(new URL(request.url()).pathname))
    await page.goto(`${suite.shop.origin}/turnstile-explicit`)
    await waitFor(page, 'window.events.length > 0')
    await page.evaluate(() => window.turnstile?.execute('#box'))
    await challenge.arrived
    const afterRemoval = apiRequestsFrom(page)
    await page.evaluate(() => document.querySelector('#box')?.remove())
    await expect.poll(() => cancelled).toEqual(['/api/v1/challenge'])
    challenge.release()
    await new Promise((resolve) => setTimeout(resolve, 1_500))

    // No token, no callback, nothing more asked of the service; the widget is let go.
    expect(await page.evaluate(() => (window as unknown as { events: unknown[] }).events.length)).toBe(1)
    expect(afterRemoval).toEqual([])
    expect(await page.evaluate(() => window.turnstile?.getResponse())).toBeUndefined()
    expect(events.errors).toEqual([])
  })

  it('calls the error callback with Turnstile\'s code for an unknown site key, and Tollgate\'s beside it', async () => {
    const { page } = await open('/turnstile-unknown-key')
    await waitFor(page, 'window.failures.length > 0')
    expect(await page.evaluate(() => (window as unknown as { failures: unknown[] }).failures)).toEqual([['110100', 'invalid_site_key']])
  })

  it('answers reCAPTCHA v3\'s execute(siteKey, { action }) with a fresh token each time, redeemed at reCAPTCHA\'s Siteverify path', async () => {
    const { page } = await open('/recaptcha-v3')
    const tokens = await page.evaluate((siteKey) => new Promise<string[]>((resolve, reject) => {
      const grecaptcha = (window as unknown as { grecaptcha: { ready(callback: () => void): void; execute(key: string, options: { action: string }): Promise<string> } }).grecaptcha
      grecaptcha.ready(() => {
        Promise.all([grecaptcha.execute(siteKey, { action: 'submit' }), grecaptcha.execute(siteKey, { action: 'submit' })]).then(resolve, reject)
      })
    }), suite.sdk.demoSite.siteKey)
    expect(tokens).toHaveLength(2)
    expect(tokens[0]).not.toBe(tokens[1])
    // The Enterprise namespace is the same API.
    expect(await page.evaluate(() => {
      const grecaptcha = (window as unknown as { grecaptcha: { enterprise: unknown } }).grecaptcha
      return grecaptcha.enterprise === grecaptcha
    })).toBe(true)
    for (const token of tokens) expect(await redeemAtVendorPath('/recaptcha/api/siteverify', token ?? '')).toMatchObject({ success: true, action: 'submit' })
  })

  it('posts reCAPTCHA v3\'s form for a blocked visitor, as Google\'s does, with a placeholder that every Siteverify path refuses', async () => {
    const { page, errors } = await open('/recaptcha-v3-blocked')
    const ordersBefore = suite.shop.orders.length
    await page.click('#order button')
    await page.waitForSelector('#ordered', { timeout: 20_000 })
    expect(suite.shop.orders).toHaveLength(ordersBefore + 1)
    const posted = suite.shop.orders.at(-1)?.['g-recaptcha-response'] ?? ''
    // The reference the visitor would have been shown, which the dashboard's log finds.
    expect(posted).toMatch(/^tollgate-blocked:[\da-f]{8}-[\da-f]{4}$/)
    for (const path of ['/recaptcha/api/siteverify', '/siteverify', '/turnstile/v0/siteverify', '/api/v1/siteverify']) {
      // The site's secret, and the always-pass test secret a CI with this test key would use.
      for (const secret of [suite.sdk.demoSite.secretKey, testSecrets.alwaysPasses, testSecrets.recaptchaPasses]) {
        expect(await redeemAtVendorPath(path, posted, secret), `${path} ${secret}`).toMatchObject({ success: false, 'error-codes': ['invalid-input-response'] })
      }
    }
    expect(errors).toEqual([])
  })

  it('gets the token when Google\'s button markup is clicked, not before, and the page\'s callback posts it as g-recaptcha-response', async () => {
    const { page, events } = await suite.browser.newPage()
    await page.goto(`${suite.shop.origin}/recaptcha-invisible`)
    await page.waitForFunction(() => document.querySelector('textarea[name="g-recaptcha-response"]') !== null)
    // Bound to a button: nothing is asked of the service before the click.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(events.api).toEqual([])
    expect(await page.evaluate(() => (window as unknown as { grecaptcha: { getResponse(): string } }).grecaptcha.getResponse())).toBe('')
    const ordersBefore = suite.shop.orders.length
    await page.click('#order button')
    await page.waitForSelector('#ordered', { timeout: 20_000 })
    expect(suite.shop.orders).toHaveLength(ordersBefore + 1)
    const order = suite.shop.orders.at(-1) ?? {}
    expect(Object.keys(order)).toEqual(['item', 'g-recaptcha-response'])
    expect(await redeemAtVendorPath('/recaptcha/api/siteverify', order['g-recaptcha-response'] ?? '')).toMatchObject({ success: true, action: 'submit' })
  })

  it('answers to reCAPTCHA\'s markup and name on Turnstile\'s script with compat=recaptcha, as Turnstile does', async () => {
    const { page } = await open('/turnstile-compat-recaptcha')
    await waitFor(page, 'typeof window.token === "string"')
    const token = await page.evaluate(() => (window as unknown as { token: string }).token)
    expect(await page.evaluate(() => [typeof window.turnstile?.render, (window as unknown as { grecaptcha: { getResponse(): string } }).grecaptcha.getResponse()])).toEqual(['function', token])
    expect(await page.evaluate(() => document.querySelector<HTMLTextAreaElement>('#order [name="g-recaptcha-response"]')?.value)).toBe(token)
  })

  it('installs the API over Google\'s asynchronous-loading stub and runs the callbacks it queued', async () => {
    const { page } = await open('/recaptcha-async-snippet')
    await waitFor(page, 'typeof window.queuedToken === "string"')
    const token = await page.evaluate(() => (window as unknown as { queuedToken: string }).queuedToken)
    expect(await redeemAtVendorPath('/recaptcha/api/siteverify', token)).toMatchObject({ success: true, action: 'homepage' })
  })

  it('renders a container named like the vendor, survives an element without a site key, and reports a callback that throws without losing the token', async () => {
    const { page, errors } = await open('/hcaptcha-awkward')
    await waitFor(page, 'typeof window.token === "string"')
    expect(await page.evaluate(() => typeof (window as unknown as { hcaptcha: { render?: unknown } }).hcaptcha.render)).toBe('function')
    const token = await page.evaluate(() => (window as unknown as { token: string }).token)
    expect(await page.evaluate(() => document.querySelector<HTMLTextAreaElement>('#hcaptcha textarea[name="h-captcha-response"]')?.value)).toBe(token)
    await expect.poll(() => errors.some((error) => error.includes("the page's own bug"))).toBe(true)
    expect(errors).toEqual(expect.arrayContaining([expect.stringContaining('missing sitekey'), expect.stringContaining("the page's own bug")]))
    expect(await redeemAtVendorPath('/siteverify', token)).toMatchObject({ success: true })
  })

  it('calls onload once the document is parsed when the script runs in the head', async () => {
    const { page, errors } = await open('/turnstile-in-head')
    await waitFor(page, 'typeof window.token === "string"')
    expect(await page.evaluate(() => (window as unknown as { widgetId: string }).widgetId)).toMatch(/^tollgate-turnstile-\d+$/)
    expect(errors).toEqual([])
  })

  it('renders a .h-captcha element: the form posts h-captcha-response and g-recaptcha-response, and grecaptcha answers for hcaptcha', async () => {
    const { page } = await open('/hcaptcha')
    await waitFor(page, 'window.tokens.length > 0')
    const token = await page.evaluate(() => (window as unknown as { tokens: string[] }).tokens[0] ?? '')
    expect(await page.evaluate(() => {
      const page = window as unknown as { grecaptcha: unknown; hcaptcha: { getResponse(): string } }
      return [page.grecaptcha === page.hcaptcha, page.hcaptcha.getResponse()]
    })).toEqual([true, token])
    await page.click('#order button')
    await page.waitForSelector('#ordered')
    expect(suite.shop.orders.at(-1)).toEqual({ item: 'pen', 'h-captcha-response': token, 'g-recaptcha-response': token })
    expect(await redeemAtVendorPath('/siteverify', token)).toMatchObject({ success: true })
  })

  it('resolves hCaptcha\'s execute(id, { async: true }) with { response, key }, without reCAPTCHA\'s name when recaptchacompat=off', async () => {
    const { page } = await open('/hcaptcha-async')
    await page.waitForFunction(() => 'widgetId' in window)
    const answer = await page.evaluate(() => {
      const { hcaptcha, widgetId } = window as unknown as { widgetId: string; hcaptcha: { execute(id: string, options: { async: true }): Promise<{ response: string; key: string }> } }
      return hcaptcha.execute(widgetId, { async: true })
    })
    expect(answer).toEqual({ response: expect.stringMatching(/.{40,}/), key: '' })
    expect(await page.evaluate(() => 'grecaptcha' in window)).toBe(false)
    expect(await page.evaluate(() => document.querySelectorAll('#box textarea').length)).toBe(1)
    expect(await redeemAtVendorPath('/siteverify', answer.response)).toMatchObject({ success: true })
  })

  it('resolves hCaptcha\'s execute({ async: true }) without a widget id for the first widget, as hCaptcha documents it', async () => {
    const { page } = await open('/hcaptcha-async')
    await page.waitForFunction(() => 'widgetId' in window)
    const answer = await page.evaluate(() => {
      const { hcaptcha } = window as unknown as { hcaptcha: { execute(options: { async: true }): Promise<{ response: string; key: string }> } }
      return hcaptcha.execute({ async: true })
    })
    expect(answer).toEqual({ response: expect.stringMatching(/.{40,}/), key: '' })
    expect(await redeemAtVendorPath('/siteverify', answer.response)).toMatchObject({ success: true })
  })

  it('gives a token to each vendor\'s public test site key, which that vendor\'s test secret redeems with the page\'s facts', async () => {
    const cases = [
      ['/turnstile-test-key', '/turnstile/v0/siteverify', testSecrets.alwaysPasses, 'checkout'],
      ['/recaptcha-test-key', '/recaptcha/api/siteverify', testSecrets.recaptchaPasses, 'allow'],
      ['/hcaptcha-test-key', '/siteverify', testSecrets.hcaptchaPasses, 'allow'],
    ] as const
    for (const [pagePath, siteverifyPath, secret, action] of cases) {
      const { page } = await open(pagePath)
      await waitFor(page, 'typeof window.token === "string"')
      const token = await page.evaluate(() => (window as unknown as { token: string }).token)
      expect(await redeemAtVendorPath(siteverifyPath, token, secret), pagePath).toMatchObject({ success: true, hostname: 'localhost', action })
    }
  })

  it("gets a token under Turnstile's own Content-Security-Policy with the host changed: no blob: worker starts, so the page solves by itself", async () => {
    const { page } = await suite.browser.newPage()
    const told: string[] = []
    page.on('console', (message) => {
      if (message.text().startsWith('Tollgate:')) told.push(message.text())
    })
    await page.goto(`${suite.shop.origin}/turnstile-vendor-csp`)
    await waitUnderPolicy(page, () => typeof (window as unknown as { token?: unknown }).token === 'string' || (window as unknown as { failures: unknown[] }).failures.length > 0)
    expect(await page.evaluate(() => (window as unknown as { failures: unknown[] }).failures)).toEqual([])
    const token = await page.evaluate(() => (window as unknown as { token: string }).token)
    expect(await redeemAtVendorPath('/siteverify', token)).toMatchObject({ success: true })
    // Said once to the site's developer, whose policy (without worker-src blob:) makes visitors wait longer.
    expect(told).toEqual([expect.stringContaining('no Web Worker could start')])
  })

  it('gets a token, solving in WebAssembly, under the vendors\' policies with sdk/README.md\'s additions (worker-src blob:, \'wasm-unsafe-eval\')', async () => {
    for (const path of ['/turnstile-vendor-csp-completed', '/hcaptcha-vendor-csp-completed']) {
      const { page, events } = await suite.browser.newPage()
      const told: string[] = []
      page.on('console', (message) => {
        if (message.text().startsWith('Tollgate:')) told.push(message.text())
      })
      await page.goto(`${suite.shop.origin}${path}`)
      await waitUnderPolicy(page, () => typeof (window as unknown as { token?: unknown }).token === 'string')
      const token = await page.evaluate(() => (window as unknown as { token: string }).token)
      expect(await redeemAtVendorPath('/siteverify', token), path).toMatchObject({ success: true })
      expect(told, path).toEqual([])
      expect(events.errors.filter((error) => /Content Security Policy/i.test(error)), path).toEqual([])
    }
  })

  it('refuses a render without a container or a site key as each vendor does, and Tollgate.reset() clears every widget', async () => {
    const { page } = await open('/compat-explicit')
    const refusals = await page.evaluate(() => {
      const { turnstile, grecaptcha, hcaptcha } = window as unknown as Record<'turnstile' | 'grecaptcha' | 'hcaptcha', { render(container: unknown, params?: object): unknown }>
      const thrown = (render: () => unknown) => {
        try {
          return ['returned', render()]
        } catch (error) {
          return ['threw', (error as Error).message]
        }
      }
      return [
        thrown(() => turnstile.render('#nowhere', { sitekey: 'tgk_x' })),
        thrown(() => turnstile.render('#plain', {})),
        thrown(() => grecaptcha.render('nowhere', { sitekey: 'tgk_x' })),
      thrown(() => grecaptcha.render('second', { sitekey: 'tgk_x', size: 'invisible' })),
      thrown(() => grecaptcha.render('second', { sitekey: 'tgk_x', size: 'invisible' })),
        thrown(() => hcaptcha.render('plain', {})),
        document.querySelectorAll('#plain *').length,
      ]
    })
    expect(refusals).toEqual([
      ['returned', undefined],
      ['returned', undefined],
      ['threw', 'reCAPTCHA placeholder element must be an element or id'],
      ['returned', 0],
      ['threw', 'reCAPTCHA has already been rendered in this element'],
      ['threw', '[hCaptcha] render: missing sitekey'],
      0,
    ])

    // Two widgets of two vendors, each with its token; reset() takes both.
    await page.evaluate((siteKey) => {
      const { turnstile, grecaptcha } = window as unknown as Record<'turnstile' | 'grecaptcha', { render(container: string, params: object): unknown }>
      turnstile.render('#plain', { sitekey: siteKey })
      grecaptcha.render('third', { sitekey: siteKey })
    }, suite.sdk.demoSite.siteKey)
    await waitFor(page, `window.turnstile.getResponse() !== undefined && window.grecaptcha.getResponse(1) !== ''`)
    const cleared = await page.evaluate(() => {
      const page = window as unknown as { Tollgate: { reset(): void }; grecaptcha: { getResponse(id: number): string } }
      page.Tollgate.reset()
      return [window.turnstile?.getResponse(), page.grecaptcha.getResponse(1), Array.from(document.querySelectorAll<HTMLInputElement>('[name$="-response"]'), (field) => field.value)]
    })
    expect(cleared).toEqual([undefined, '', ['', '', '']])
    // Both get a token again by themselves, as after their vendors' reset.
    await waitFor(page, `window.turnstile.getResponse() !== undefined && window.grecaptcha.getResponse(1) !== ''`)
  })

  it('tells the developer of an ALTCHA or Friendly Captcha page in the console how to move it, and stays quiet on the vendors\' pages it serves', async () => {
    for (const path of ['/altcha', '/friendly-captcha', '/hcaptcha']) {
      const { page } = await suite.browser.newPage()
      const warnings: string[] = []
      page.on('console', (message) => {
        if (message.type() === 'warning') warnings.push(message.text())
      })
      await page.goto(`${suite.shop.origin}${path}`)
      await page.waitForFunction(() => typeof (window as unknown as { Tollgate?: unknown }).Tollgate === 'object')
      await new Promise((resolve) => setTimeout(resolve, 300))
      if (path === '/hcaptcha') expect(warnings).toEqual([])
      else expect(warnings, path).toEqual(['Tollgate: ALTCHA, Friendly Captcha: use tollgate.js, form data-tollgate (docs/migrating.md)'])
    }
  })

  it('leaves a vendor\'s global the page already has, and defines the others', async () => {
    const { page } = await open('/vendor-still-there')
    expect(await page.evaluate(() => {
      const page = window as unknown as Record<string, { vendor?: string; render?: unknown }>
      return [page.turnstile?.vendor, typeof page.grecaptcha?.render, typeof page.hcaptcha?.render, typeof page.Tollgate]
    })).toEqual(['cloudflare', 'function', 'function', 'object'])
  })
})
