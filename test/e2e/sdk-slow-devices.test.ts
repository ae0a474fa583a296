/// <reference lib="dom" />
import type { BrowserContext, Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { apiRequestsFrom, hasChromium, holdFirst, recordSignup, serviceAndBrowser, signupState, typeLikeAPerson, waitForTheSubmitToEnd } from './sdk-support.js'

const SUBMIT = '#signup-form button[type="submit"]'

describe.runIf(hasChromium())('the SDK on slow devices and bad networks, in Chromium', () => {
  const suite = serviceAndBrowser()

  it('tells a visitor whose solve runs long that it is still at work, and holds the submit button until it ends', async () => {
    const { page } = await suite.browser.newPage()
    // The page's clock, so that five seconds pass at once.
    await page.clock.install()
    await page.goto(`${suite.sdk.origin}/demo`)
    // The early solve's challenge is held: the solve has not ended when the visitor submits.
    const held = await holdFirst(page, '**/api/v1/challenge')
    await recordSignup(page)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await held.arrived
    await page.click(SUBMIT)
    await page.waitForFunction(() => document.querySelector('#signup-form [data-tollgate-status]')?.textContent === 'Checking your browser\u2026')
    const button = page.locator(SUBMIT)
    expect(await button.isDisabled()).toBe(true)
    expect(await button.getAttribute('aria-busy')).toBe('true')

    await page.clock.fastForward(6_000)
    await page.waitForFunction(() => document.querySelector('#signup-form [data-tollgate-status]')?.textContent?.startsWith('Still checking'))
    expect((await signupState(page)).status).toBe('Still checking \u2014 this can take up to a minute on some devices.')

    held.release()
    await waitForTheSubmitToEnd(page)
    const state = await signupState(page)
    expect(state.submitted).toHaveLength(1)
    expect(state.submitted[0]).not.toBe('')
    expect(state.status).toBe('Verified.')
    expect(await button.isDisabled()).toBe(false)
    expect(await button.getAttribute('aria-busy')).toBeNull()
  })

  it("leaves the submit button disabled when the page's own submit handler disables it", async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await recordSignup(page)
    // The usual double-submit guard: the page's handler disables its button while it posts.
    await page.evaluate(() => {
      const form = document.querySelector<HTMLFormElement>('#signup-form')
      form?.addEventListener('submit', (event) => {
        const button = event.submitter as HTMLButtonElement | null
        if (button) button.disabled = true
      })
    })
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await page.click(SUBMIT)
    await waitForTheSubmitToEnd(page)
    expect((await signupState(page)).submitted).toHaveLength(1)
    // The SDK gives its hold back after the submit event has run: let that tick pass.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)))
    const button = page.locator(SUBMIT)
    expect(await button.isDisabled()).toBe(true)
    expect(await button.getAttribute('aria-busy')).toBeNull()
  })

  it('gives the submit button back after a failure too', async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.route('**/api/v1/verify', (route) => route.fulfill({ status: 400, contentType: 'application/json', body: '{"error":{"code":"invalid_site_key","message":"Unknown site key."}}' }))
    await recordSignup(page)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await page.click(SUBMIT)
    await waitForTheSubmitToEnd(page)

    expect((await signupState(page)).errors).toEqual(['invalid_site_key'])
    expect(await page.locator(SUBMIT).isDisabled()).toBe(false)
  })

  it('submits the form by itself when the connection comes back after it failed offline', async () => {
    const { page, context } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await submitOffline(page, context)
    const offline = await signupState(page)
    expect(offline.errors).toEqual(['network_error'])
    expect(offline.status).toMatch(/cannot be reached/)
    expect(offline.submitted).toEqual([])

    await context.setOffline(false)
    await page.waitForFunction(() => (window as unknown as { record: { submitted: string[] } }).record.submitted.length > 0, undefined, { timeout: 25_000 })
    const online = await signupState(page)
    expect(online.submitted).toHaveLength(1)
    expect(online.submitted[0]).not.toBe('')
    expect(online.status).toBe('Verified.')
  })

  it('does not submit by itself after a failure while the browser was online, when an online event comes later', async () => {
    const { page, context } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await recordSignup(page)
    // The service does not answer; the browser stays online.
    await page.route('**/api/v1/verify', (route) => route.abort('connectionrefused'))
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await page.click(SUBMIT)
    await waitForTheSubmitToEnd(page)
    expect((await signupState(page)).errors).toEqual(['network_error'])

    // The service answers again; the phone then drops off the network and comes back.
    await page.unroute('**/api/v1/verify')
    const asked = apiRequestsFrom(page)
    await context.setOffline(true)
    await context.setOffline(false)
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 3_000)))
    expect(asked).toEqual([])
    expect((await signupState(page)).submitted).toEqual([])
  })

  it('does not submit by itself when the connection comes back more than five minutes after it failed offline', async () => {
    const { page, context } = await suite.browser.newPage()
    await page.clock.install()
    await page.goto(`${suite.sdk.origin}/demo`)
    await submitOffline(page, context)
    expect((await signupState(page)).errors).toEqual(['network_error'])

    // The visitor has left the form open: the connection comes back much later.
    await page.clock.fastForward(6 * 60_000)
    const asked = apiRequestsFrom(page)
    await context.setOffline(false)
    await page.clock.runFor(3_000)
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)))
    expect(asked).toEqual([])
    expect((await signupState(page)).submitted).toEqual([])
  })
})

/** Takes the browser offline once the SDK has loaded, and submits the sign-up form, which fails. */
async function submitOffline(page: Page, context: BrowserContext): Promise<void> {
  await recordSignup(page)
  await page.waitForFunction(() => 'Tollgate' in window)
  await context.setOffline(true)
  await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
  await page.click(SUBMIT)
  await waitForTheSubmitToEnd(page)
}
