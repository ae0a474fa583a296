/// <reference lib="dom" />
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { hasChromium, serviceAndBrowser } from './sdk-support.js'

/**
 * What the SDK reports of the automation a browser test (or a bot) brings into the page, with the
 * bundled Playwright on Chromium: the markers that README.md and sdk/README.md ("In your own browser
 * tests") name. Should
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
})
