/// <reference lib="dom" />
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { patchLikeStealthPlugins } from '../../bench/detection/browser-automation.js'
import { hasChromium, serviceAndBrowser } from './sdk-support.js'

/**
 * What the SDK reports of the automation a browser test (or a bot) brings into the page, with the
 * bundled Playwright on Chromium: the markers that README.md and sdk/README.md ("In your own browser
 * tests") name, and natives replaced by a stealth setup (patched_natives, docs/risk.md). Should
 * Playwright change what it leaves in the page, these fail before the docs drift.
 */
describe.runIf(hasChromium())('automation the SDK sees in the page, in Chromium', () => {
  const suite = serviceAndBrowser()

  /** Verifies on /demo and answers what the site's backend reads at Siteverify, with what the SDK sent. */
  async function verify(page: Page): Promise<{ riskScore: number; anomalies: string[]; fingerprint: Record<string, unknown> }> {
    const submitted = page.waitForRequest((request) => new URL(request.url()).pathname === '/api/v1/verify')
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.waitForFunction(() => 'Tollgate' in window)
    const { token } = await page.evaluate((siteKey) => window.Tollgate.execute({ siteKey }), suite.sdk.demoSite.siteKey)
    const body = (await submitted).postDataJSON() as { fingerprint: Record<string, unknown> }
    const answer = await suite.sdk.siteverify(token) as unknown as { success: boolean; riskScore: number; anomalies: string[] }
    expect(answer.success).toBe(true)
    return { riskScore: answer.riskScore, anomalies: answer.anomalies, fingerprint: body.fingerprint }
  }

  it('reports Playwright\'s binding globals after exposeFunction, as automation_markers', async () => {
    const { page } = await suite.browser.newPage()
    await page.exposeFunction('reportToTest', () => 'ok')
    await page.goto(`${suite.sdk.origin}/demo`)
    expect(await page.evaluate(() => ['__playwright__binding__', '__playwright__binding__controller__'].filter((name) => name in window))).toEqual(['__playwright__binding__', '__playwright__binding__controller__'])

    // The markers' +60 on top of what this headless browser shows reaches 100: blocked even at the demo's thresholds.
    const submitted = page.waitForRequest((request) => new URL(request.url()).pathname === '/api/v1/verify')
    const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/verify')
    await page.waitForFunction(() => 'Tollgate' in window)
    const code = await page.evaluate((siteKey) => window.Tollgate.execute({ siteKey }).then(() => 'allowed', (error: { code: string }) => error.code), suite.sdk.demoSite.siteKey)
    expect(((await submitted).postDataJSON() as { fingerprint: { automationMarkers: number } }).fingerprint.automationMarkers).toBeGreaterThan(0)
    expect([code, await (await answered).json()]).toMatchObject(['blocked', { action: 'block', riskScore: 100 }])
  })

  it('finds no marker after addInitScript alone: the bundled Playwright leaves no __pwInitScripts', async () => {
    const { page } = await suite.browser.newPage()
    await page.addInitScript(() => Object.assign(window, { initScriptRan: true }))
    await page.goto(`${suite.sdk.origin}/demo`)
    expect(await page.evaluate(() => [(window as { initScriptRan?: boolean }).initScriptRan, typeof (window as { __pwInitScripts?: unknown }).__pwInitScripts]))
      .toEqual([true, 'undefined'])

    const { anomalies, fingerprint } = await verify(page)
    expect(fingerprint.automationMarkers).toBe(0)
    expect(anomalies).not.toContain('automation_markers')
  })

  it('labels a stealth setup that patches navigator.webdriver and the WebGL renderer, and scores it above the same browser without the patches', async () => {
    const clean = await verify((await suite.browser.newPage()).page)
    expect(clean.fingerprint.patchedNatives).toBe(0)
    expect(clean.anomalies).not.toContain('patched_natives')

    const { page } = await suite.browser.newPage()
    // What stealth plugins do: navigator.webdriver false, and a GPU in place of SwiftShader.
    await page.addInitScript(patchLikeStealthPlugins)
    const stealthy = await verify(page)
    expect(stealthy.fingerprint.patchedNatives).toBe(2)
    expect(stealthy.anomalies).toContain('patched_natives')
    expect(stealthy.anomalies).not.toContain('webgl_software_renderer')
    expect(stealthy.riskScore).toBeGreaterThan(clean.riskScore)
  })

  it('labels patches whose source carries the words [native code] in a block or line comment, without a patched toString', async () => {
    const { page } = await suite.browser.newPage()
    // As written (a string: the test's own transpiling would drop the comments).
    await page.addInitScript({
      content: `
        Object.defineProperty(Navigator.prototype, 'webdriver', { get: function webdriver() { /* [native code] */ return false }, configurable: true })
        const getParameter = WebGLRenderingContext.prototype.getParameter
        WebGLRenderingContext.prototype.getParameter = function (name) {
          return name === 37446 ? 'Intel Iris OpenGL Engine' : getParameter.call(this, name) /* { [native code] } */
        }
        navigator.permissions.query = function (descriptor) { return Promise.resolve({ state: 'prompt', name: descriptor.name }) // { [native code]
        }`,
    })
    const { anomalies, fingerprint } = await verify(page)
    expect(fingerprint.patchedNatives).toBe(3)
    expect(anomalies).toContain('patched_natives')
  })

  it('finds nothing patched on a page whose polyfills replace other natives, and Function.prototype.toString as core-js does', async () => {
    const { page } = await suite.browser.newPage()
    await page.addInitScript(() => {
      // core-js (make-built-in.js) replaces toString with one that answers its own source as native.
      // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its context
      const native = Function.prototype.toString
      const sources = new WeakMap<object, string>()
      const toString = function toString(this: unknown): string {
        return (typeof this === 'function' ? sources.get(this) : undefined) ?? native.call(this)
      }
      sources.set(toString, 'function toString() { [native code] }')
      Object.defineProperty(Function.prototype, 'toString', { value: toString, writable: true, configurable: true })
      // Polyfills and wrappers pages commonly carry (analytics wrapping fetch and history).
      const fetchOriginal = window.fetch.bind(window)
      window.fetch = (...args: Parameters<typeof fetch>) => fetchOriginal(...args)
      // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its context
      const pushState = history.pushState
      history.pushState = function (this: History, ...args: Parameters<History['pushState']>) { pushState.apply(this, args) }
      Object.defineProperty(Array.prototype, 'at', { value: function at(this: unknown[], index: number) { return this[index < 0 ? this.length + index : index] }, writable: true, configurable: true })
      Object.defineProperty(Promise, 'allSettled', { value: Promise.allSettled.bind(Promise), writable: true, configurable: true })
    })
    const { anomalies, fingerprint } = await verify(page)
    expect(fingerprint.patchedNatives).toBe(0)
    expect(anomalies).not.toContain('patched_natives')
  })
})
