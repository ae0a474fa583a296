/// <reference lib="dom" />
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { apiRequestsFrom, hasChromium } from './sdk-support.js'
import { html, shopServiceAndBrowser } from './vendor-shop.js'

/** @hcaptcha/react-hcaptcha's error handler resets the widget, then calls the page's onError. */
function reactHcaptchaErrorPage(service: string, siteKey: string): string {
  return html(`
<div id="box"></div>
<script>
  window.errors = []
  window.onloadHcaptcha = function () {
    window.widgetId = hcaptcha.render('box', {
      sitekey: '${siteKey}',
      'error-callback': function (code) { hcaptcha.reset(window.widgetId); window.errors.push(code) },
    })
  }
</script>
<script src="${service}/1/api.js?render=explicit&onload=onloadHcaptcha" async defer></script>`)
}

/**
 * The vendors' page APIs (compat.js) called as the community wrapper libraries from npm call them
 * (@hcaptcha/react-hcaptcha 2.2.0, react-google-recaptcha 3.1.0, react-google-recaptcha-v3 1.11.0,
 * @marsidev/react-turnstile 1.6.1): each page makes a library's calls in plain JavaScript, in its order.
 */
function libraryPages(service: string, siteKey: string, unknownKey: string): Record<string, string> {
  return {
    // react-hcaptcha's error handler, with a key the service does not know, and for a visitor it
    // turns away (the always-blocking test key).
    '/react-hcaptcha-error': reactHcaptchaErrorPage(service, unknownKey),
    '/react-hcaptcha-blocked': reactHcaptchaErrorPage(service, '2x00000000000000000000AB'),
    // Its expiry handler resets the widget, then calls the page's onExpire.
    '/react-hcaptcha-expire': html(`
<div id="box"></div>
<script>
  window.tokens = []; window.expiredArguments = []
  window.onloadHcaptcha = function () {
    window.widgetId = hcaptcha.render('box', {
      sitekey: '${siteKey}',
      callback: function (token) { window.tokens.push(token) },
      'expired-callback': function () { const given = arguments.length; hcaptcha.reset(window.widgetId); window.expiredArguments.push(given) },
    })
  }
</script>
<script src="${service}/1/api.js?render=explicit&onload=onloadHcaptcha" async defer></script>`),
    // Its unmount removes the widget; the page counts the MutationObservers that compat.js has observing (not Playwright's own).
    '/react-hcaptcha-unmount': html(`
<div id="root"></div>
<script>
  window.observing = 0
  window.MutationObserver = class extends MutationObserver {
    observe(...args) {
      if (!this.counted && new Error().stack.includes('/1/api.js')) { this.counted = true; window.observing += 1 }
      super.observe(...args)
    }
    disconnect() { if (this.counted) window.observing -= 1; this.counted = false; super.disconnect() }
  }
  window.onloadHcaptcha = function () {
    window.box = document.createElement('div')
    window.widgetId = hcaptcha.render(window.box, { sitekey: '${siteKey}' })
  }
</script>
<script src="${service}/1/api.js?render=explicit&onload=onloadHcaptcha" async defer></script>`),
    // An invisible widget whose container leaves the page before it is ever executed.
    '/hcaptcha-invisible-detached': html(`
<div id="root"><div id="box"></div></div>
<script>
  window.onloadHcaptcha = function () {
    window.widgetId = hcaptcha.render('box', { sitekey: '${siteKey}', size: 'invisible', callback: function (token) { window.token = token } })
  }
</script>
<script src="${service}/1/api.js?render=explicit&onload=onloadHcaptcha" async defer></script>`),
    // A page that hands one function to both of reCAPTCHA's callbacks, as Google's scripts call them (the token, then nothing).
    '/recaptcha-one-handler': html(`
<form><div id="box"></div><button id="send" disabled>Send</button></form>
<script>
  function onCaptcha(token) { document.getElementById('send').disabled = !token }
  window.onloadRecaptcha = function () {
    grecaptcha.render('box', { sitekey: '${siteKey}', callback: 'onCaptcha', 'expired-callback': 'onCaptcha' })
  }
</script>
<script src="${service}/recaptcha/api.js?onload=onloadRecaptcha&render=explicit" async defer></script>`),
    // Its HCaptchaProvider with rqdata: setData after render, then execute.
    '/react-hcaptcha-rqdata': html(`
<div id="box"></div>
<script>
  window.onloadHcaptcha = function () {
    window.widgetId = hcaptcha.render('box', { sitekey: '${siteKey}', size: 'invisible' })
    window.setDataAnswer = hcaptcha.setData(window.widgetId, { rqdata: 'from-the-server' })
  }
</script>
<script src="${service}/1/api.js?render=explicit&onload=onloadHcaptcha" async defer></script>`),
    // react-google-recaptcha renders into an element of its own, then attaches it; `hl` as its prop.
    '/react-google-recaptcha': html(`
<div id="root"></div>
<script>
  window.onloadRecaptcha = function () {
    const wrapper = document.createElement('div')
    window.widgetId = grecaptcha.render(wrapper, { sitekey: '${siteKey}', hl: 'de', callback: function (token) { window.token = token } })
    document.getElementById('root').append(wrapper)
    // One the page never attaches gets nothing.
    grecaptcha.render(document.createElement('div'), { sitekey: '${siteKey}', callback: function (token) { window.strayToken = token } })
  }
</script>
<script src="${service}/recaptcha/api.js?onload=onloadRecaptcha&render=explicit" async defer></script>`),
    // react-google-recaptcha-v3 with `container`: an invisible widget, executed with each action.
    '/react-google-recaptcha-v3': html(`
<div id="badge"></div>
<script src="${service}/recaptcha/api.js?render=explicit"></script>
<script>window.clientId = grecaptcha.render('badge', { sitekey: '${siteKey}', badge: 'inline', size: 'invisible' })</script>`),
    // @marsidev/react-turnstile: explicit render with refresh-expired and an onExpire(token).
    '/marsidev-react-turnstile': html(`
<div id="manual"></div><div id="never"></div>
<script>
  window.events = []
  window.onloadTurnstileCallback = function () {
    for (const mode of ['manual', 'never']) {
      turnstile.render('#' + mode, {
        sitekey: '${siteKey}',
        'refresh-expired': mode,
        callback: function (token) { window.events.push([mode, 'token', token]) },
        'expired-callback': function (token) { window.events.push([mode, 'expired', token]) },
      })
    }
  }
</script>
<script id="cf-turnstile-script" src="${service}/turnstile/v0/api.js?onload=onloadTurnstileCallback&render=explicit" async defer></script>`),
  }
}

type Events = [string, string, string][]

describe.runIf(hasChromium())('the vendors\' page APIs as the wrapper libraries call them, in Chromium', () => {
  const suite = shopServiceAndBrowser(libraryPages)

  function waitFor(page: Page, condition: string): Promise<unknown> {
    return page.waitForFunction(condition, undefined, { timeout: 20_000 })
  }

  it('asks once when an error callback resets the widget (react-hcaptcha), and again only when the visitor presses the widget\'s button', async () => {
    const { page } = await suite.browser.newPage()
    const requests = apiRequestsFrom(page)
    await page.goto(`${suite.shop.origin}/react-hcaptcha-error`)
    await waitFor(page, 'window.errors.length > 0')
    // Before, each reset ran again at once: hundreds of refused challenges a second.
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    expect(requests).toEqual(['/api/v1/challenge'])
    expect(await page.evaluate(() => (window as unknown as { errors: string[] }).errors)).toEqual(['invalid-data'])
    await expect.poll(() => page.locator('#box button').textContent()).toBe('Verify again')
    await page.click('#box button')
    await waitFor(page, 'window.errors.length > 1')
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(requests).toEqual(['/api/v1/challenge', '/api/v1/challenge'])
  })

  it('keeps the block\'s sentence and reference in the status when the error callback resets the widget (react-hcaptcha)', async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.shop.origin}/react-hcaptcha-blocked`)
    await waitFor(page, 'window.errors.length > 0')
    // Before, the reset wrote the idle status over it: the visitor lost the reference to give the site's support.
    expect(await page.locator('#box .tollgate-status').textContent()).toMatch(/^This request was blocked\. .* Reference: \u2068[0-9a-f]{8}-[0-9a-f]{4}\u2069$/)
    expect(await page.locator('#box button').textContent()).toBe('Verify again')
  })

  it('shows no button beside the new token when the expired callback resets the widget (react-hcaptcha), and gives that callback nothing', async () => {
    const { page } = await suite.browser.newPage()
    await page.clock.install()
    await page.goto(`${suite.shop.origin}/react-hcaptcha-expire`)
    await waitFor(page, 'window.tokens.length === 1')
    await page.clock.fastForward(296_000)
    await waitFor(page, 'window.tokens.length === 2')
    const { tokens, expiredArguments, response } = await page.evaluate(() => {
      const { hcaptcha, widgetId, tokens, expiredArguments } = window as unknown as { widgetId: string; tokens: string[]; expiredArguments: number[]; hcaptcha: { getResponse(id: string): string } }
      return { tokens, expiredArguments, response: hcaptcha.getResponse(widgetId) }
    })
    // hCaptcha's script calls the expired callback with no argument.
    expect(expiredArguments).toEqual([0])
    expect(response).toBe(tokens[1])
    await expect.poll(() => page.locator('#box .tollgate-status').textContent()).toBe('Verified.')
    // Before, the expiry's "Verify again" stayed beside the new token, and pressing it threw that token away.
    expect(await page.locator('#box button').isVisible()).toBe(false)
    expect(await suite.sdk.siteverify(tokens[1] ?? '')).toMatchObject({ success: true })
  })

  it('waits for a container not yet attached with one MutationObserver, however often executed, and lets it go on remove (react-hcaptcha\'s unmount)', async () => {
    const { page } = await suite.browser.newPage()
    const requests = apiRequestsFrom(page)
    await page.goto(`${suite.shop.origin}/react-hcaptcha-unmount`)
    await waitFor(page, '"widgetId" in window')
    const observing = await page.evaluate(() => {
      const { hcaptcha, widgetId } = window as unknown as { widgetId: string; hcaptcha: { execute(id: string): void } }
      for (let index = 0; index < 3; index += 1) hcaptcha.execute(widgetId)
      return (window as unknown as { observing: number }).observing
    })
    expect(observing).toBe(1)
    const afterRemove = await page.evaluate(() => {
      const { hcaptcha, widgetId, box } = window as unknown as { widgetId: string; box: HTMLElement; hcaptcha: { remove(id: string): void } }
      hcaptcha.remove(widgetId)
      document.getElementById('root')?.append(box)
      return (window as unknown as { observing: number }).observing
    })
    expect(afterRemove).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(requests).toEqual([])
  })

  it('removes an invisible widget whose container left the page before its first run, rather than run it when the container comes back', async () => {
    const { page } = await suite.browser.newPage()
    const requests = apiRequestsFrom(page)
    await page.goto(`${suite.shop.origin}/hcaptcha-invisible-detached`)
    await waitFor(page, '"widgetId" in window')
    await page.evaluate(() => {
      const { hcaptcha, widgetId } = window as unknown as { widgetId: string; hcaptcha: { execute(id: string): void } }
      const box = document.getElementById('box')
      box?.remove()
      hcaptcha.execute(widgetId)
      if (box) document.getElementById('root')?.append(box)
    })
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(requests).toEqual([])
    expect(await page.evaluate(() => 'token' in window)).toBe(false)
  })

  it('calls a handler given for both reCAPTCHA callbacks with no token on expiry, as Google\'s script does', async () => {
    const { page } = await suite.browser.newPage()
    await page.clock.install()
    await page.goto(`${suite.shop.origin}/recaptcha-one-handler`)
    await expect.poll(() => page.locator('#send').isEnabled(), { timeout: 20_000 }).toBe(true)
    await page.clock.fastForward(296_000)
    await expect.poll(() => page.locator('#box .tollgate-status').textContent()).toBe('Verification expired.')
    // Before, it got the expired token and enabled the form's button with it.
    expect(await page.locator('#send').isEnabled()).toBe(false)
  })

  it('takes hCaptcha\'s setData (react-hcaptcha\'s rqdata) and ignores it', async () => {
    const { page, events } = await suite.browser.newPage()
    await page.goto(`${suite.shop.origin}/react-hcaptcha-rqdata`)
    await waitFor(page, '"setDataAnswer" in window')
    const answer = await page.evaluate(() => {
      const { hcaptcha, widgetId } = window as unknown as { widgetId: string; hcaptcha: { execute(id: string, options: { async: true }): Promise<{ response: string }> } }
      return hcaptcha.execute(widgetId, { async: true })
    })
    expect(await suite.sdk.siteverify(answer.response)).toMatchObject({ success: true })
    expect(events.errors).toEqual([])
  })

  it('starts a widget rendered into an element the page attaches afterwards (react-google-recaptcha), in the language of its hl', async () => {
    const { page } = await suite.browser.newPage()
    const requests = apiRequestsFrom(page)
    await page.goto(`${suite.shop.origin}/react-google-recaptcha`)
    await waitFor(page, 'typeof window.token === "string"')
    const token = await page.evaluate(() => (window as unknown as { token: string }).token)
    expect(await page.evaluate(() => (window as unknown as { grecaptcha: { getResponse(id: number): string } }).grecaptcha.getResponse(0))).toBe(token)
    expect(await page.evaluate(() => document.querySelector('#root textarea[name="g-recaptcha-response"]')?.parentElement?.parentElement?.id)).toBe('root')
    await expect.poll(() => page.locator('#root .tollgate-status').textContent()).toBe('Überprüft.')
    expect(await page.locator('#root .tollgate-status').getAttribute('lang')).toBe('de')
    expect(await suite.sdk.siteverify(token)).toMatchObject({ success: true })
    // The widget that never came into the page asked for nothing.
    expect(requests.filter((path) => path === '/api/v1/challenge')).toHaveLength(1)
    expect(await page.evaluate(() => 'strayToken' in window)).toBe(false)
  })

  it('answers grecaptcha.execute(widgetId, { action }) with a token of that action (react-google-recaptcha-v3 with a container)', async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.shop.origin}/react-google-recaptcha-v3`)
    const tokens = await page.evaluate(async () => {
      const { grecaptcha, clientId } = window as unknown as { clientId: number; grecaptcha: { execute(id: number, options: { action: string }): Promise<string> } }
      return [await grecaptcha.execute(clientId, { action: 'login' }), await grecaptcha.execute(clientId, { action: 'signup' })]
    })
    expect(await suite.sdk.siteverify(tokens[0] ?? '')).toMatchObject({ success: true, action: 'login' })
    expect(await suite.sdk.siteverify(tokens[1] ?? '')).toMatchObject({ success: true, action: 'signup' })
  })

  it('answers executes of two actions asked at once with a token of each (react-google-recaptcha-v3)', async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.shop.origin}/react-google-recaptcha-v3`)
    const tokens = await page.evaluate(() => {
      const { grecaptcha, clientId } = window as unknown as { clientId: number; grecaptcha: { execute(id: number, options: { action: string }): Promise<string> } }
      return Promise.all([grecaptcha.execute(clientId, { action: 'login' }), grecaptcha.execute(clientId, { action: 'signup' }), grecaptcha.execute(clientId, { action: 'login' })])
    })
    // The two of login are one run's; signup's, a run of its own after it (before, login's token too).
    expect(tokens[2]).toBe(tokens[0])
    expect(await suite.sdk.siteverify(tokens[0] ?? '')).toMatchObject({ success: true, action: 'login' })
    expect(await suite.sdk.siteverify(tokens[1] ?? '')).toMatchObject({ success: true, action: 'signup' })
  })

  it('says an expired token is expired under refresh-expired manual and never, gives onExpire the token, and lets the visitor refresh the manual one', async () => {
    const { page } = await suite.browser.newPage()
    await page.clock.install()
    await page.goto(`${suite.shop.origin}/marsidev-react-turnstile`)
    await waitFor(page, 'window.events.length === 2')
    const firstTokens = Object.fromEntries((await page.evaluate(() => (window as unknown as { events: Events }).events)).map(([mode, , token]) => [mode, token]))
    await page.clock.fastForward(296_000)
    await waitFor(page, 'window.events.length === 4')
    expect((await page.evaluate(() => (window as unknown as { events: Events }).events)).slice(2).sort()).toEqual([
      ['manual', 'expired', firstTokens.manual],
      ['never', 'expired', firstTokens.never],
    ])
    for (const mode of ['manual', 'never']) {
      await expect.poll(() => page.locator(`#${mode} .tollgate-status`).textContent(), { message: mode }).toBe('Verification expired.')
    }
    // Nothing new by itself: the manual widget offers its button, the never one none.
    await page.clock.fastForward(10_000)
    expect(await page.evaluate(() => (window as unknown as { events: Events }).events)).toHaveLength(4)
    expect(await page.locator('#never button').count()).toBe(0)
    await page.click('#manual button')
    await waitFor(page, 'window.events.length === 5')
    const [mode, kind, token] = (await page.evaluate(() => (window as unknown as { events: Events }).events))[4] ?? []
    expect([mode, kind]).toEqual(['manual', 'token'])
    expect(await page.locator('#manual button').isHidden()).toBe(true)
    expect(await suite.sdk.siteverify(token ?? '')).toMatchObject({ success: true })
  })
})
