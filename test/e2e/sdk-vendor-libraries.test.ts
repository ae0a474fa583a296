/// <reference lib="dom" />
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { apiRequestsFrom, hasChromium } from './sdk-support.js'
import { html, shopServiceAndBrowser } from './vendor-shop.js'

/**
 * The vendors' page APIs (compat.js) called as the community wrapper libraries from npm call them
 * (@hcaptcha/react-hcaptcha 2.2.0, react-google-recaptcha 3.1.0, react-google-recaptcha-v3 1.11.0,
 * @marsidev/react-turnstile 1.6.1): each page makes a library's calls in plain JavaScript, in its order.
 */
function libraryPages(service: string, siteKey: string, unknownKey: string): Record<string, string> {
  return {
    // @hcaptcha/react-hcaptcha's error handler resets the widget, then calls the page's onError.
    '/react-hcaptcha-error': html(`
<div id="box"></div>
<script>
  window.errors = []
  window.onloadHcaptcha = function () {
    window.widgetId = hcaptcha.render('box', {
      sitekey: '${unknownKey}',
      'error-callback': function (code) { hcaptcha.reset(window.widgetId); window.errors.push(code) },
    })
  }
</script>
<script src="${service}/1/api.js?render=explicit&onload=onloadHcaptcha" async defer></script>`),
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
