/// <reference lib="dom" />
import { afterEach, describe, expect, it } from 'vitest'
import { hasChromium, holdFirst, recordSignup, serviceAndBrowser, signupState, typeLikeAPerson, waitForTheSubmitToEnd } from './sdk-support.js'

const SUBMIT = '#signup-form button[type="submit"]'

describe.runIf(hasChromium())('the SDK on slow devices and bad networks, in Chromium', () => {
  const suite = serviceAndBrowser()
  afterEach(() => suite.sdk.setDemoSettings({ difficulty: 18 }))

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
    expect(await button.getAttribute('aria-busy')).toBe('false')
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
    await recordSignup(page)
    await page.waitForFunction(() => 'Tollgate' in window)
    await context.setOffline(true)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await page.click(SUBMIT)
    await waitForTheSubmitToEnd(page)
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
})
