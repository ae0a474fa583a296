/// <reference lib="dom" />
import type { BrowserContext, Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { apiRequestsFrom, hasChromium, holdFirst, recordSignup, serviceAndBrowser, signupState, typeLikeAPerson, waitForTheSubmitToEnd } from './sdk-support.js'

const SUBMIT = '#signup-form button[type="submit"]'
const SLOW_TEXT = 'Still checking \u2014 this can take up to a minute on some devices.'

describe.runIf(hasChromium())('the SDK on slow devices and bad networks, in Chromium', () => {
  const suite = serviceAndBrowser()

  it('does not call a slow network a slow device: no "still checking" while the challenge is on its way, and the submit button held until the end', async () => {
    const { page } = await suite.browser.newPage()
    // The page's clock, so that six seconds pass at once.
    await page.clock.install()
    await page.goto(`${suite.sdk.origin}/demo`)
    // The early solve's challenge is held: the network is slow, the device is not.
    const held = await holdFirst(page, '**/api/v1/challenge')
    await recordSignup(page)
    await recordStatusTexts(page)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await held.arrived
    await page.click(SUBMIT)
    await page.waitForFunction(() => document.querySelector('#signup-form [data-tollgate-status]')?.textContent === 'Checking your browser\u2026')
    const button = page.locator(SUBMIT)
    expect(await button.isDisabled()).toBe(true)
    expect(await button.getAttribute('aria-busy')).toBe('true')

    await page.clock.fastForward(6_000)
    expect((await signupState(page)).status).toBe('Checking your browser\u2026')

    held.release()
    await waitForTheSubmitToEnd(page)
    const state = await signupState(page)
    expect(state.submitted).toHaveLength(1)
    expect(state.submitted[0]).not.toBe('')
    expect(state.status).toBe('Verified.')
    expect(await statusTextsOf(page)).not.toContain(SLOW_TEXT)
    expect(await button.isDisabled()).toBe(false)
    expect(await button.getAttribute('aria-busy')).toBeNull()
  })

  it.each([
    ['a submit that waits for the early solve', 'early'],
    ['a submit before any touch (no early solve)', 'direct'],
  ] as const)('tells a visitor that the check is still at work after five seconds of searching, the time on the network not counted: %s', async (_name, how) => {
    const { page } = await suite.browser.newPage()
    await page.clock.install()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.waitForFunction(() => 'Tollgate' in window)
    // A slow network (the challenge held), then a slow device (a search that will not end).
    const held = await answerWithAHardChallenge(page)
    const searching = workerSearchStarted(page)
    await recordSignup(page)
    await recordStatusTexts(page)
    if (how === 'early') {
      await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
      await held.arrived
      await page.click(SUBMIT)
    } else {
      // No focus, no pointer: the form is submitted by a script, so no early solve starts.
      await page.evaluate(() => {
        const email = document.querySelector<HTMLInputElement>('#signup-email')
        if (email !== null) email.value = 'lin@example.com'
        document.querySelector<HTMLFormElement>('#signup-form')?.requestSubmit()
      })
      await held.arrived
    }
    await page.waitForFunction(() => document.querySelector('#signup-form [data-tollgate-status]')?.textContent === 'Checking your browser\u2026')
    await page.clock.fastForward(4_000)
    held.release()
    await searching
    // Seven seconds since the submit, three of them searching.
    await page.clock.fastForward(3_000)
    expect((await signupState(page)).status).toBe('Checking your browser\u2026')
    await page.clock.fastForward(2_500)
    await page.waitForFunction((text) => document.querySelector('#signup-form [data-tollgate-status]')?.textContent === text, SLOW_TEXT)
    // A script's requestSubmit() names no button to hold.
    expect(await page.locator(SUBMIT).getAttribute('aria-busy')).toBe(how === 'early' ? 'true' : null)
    expect((await signupState(page)).submitted).toEqual([])
    await page.evaluate(() => window.Tollgate.reset())
  })

  it('counts the early solve\'s search before the submit: a visitor who submits after five seconds of it is told at once', async () => {
    const { page } = await suite.browser.newPage()
    await page.clock.install()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.waitForFunction(() => 'Tollgate' in window)
    ;(await answerWithAHardChallenge(page)).release()
    const searching = workerSearchStarted(page)
    await recordSignup(page)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await searching
    // The visitor takes six seconds over the rest of the form; nothing is shown meanwhile.
    await page.clock.fastForward(6_000)
    expect((await signupState(page)).status).toBe('')
    // The page's clock stands still from here: a tenth of a second passes after the submit, no more.
    await page.clock.pauseAt(await page.evaluate(() => Date.now() + 100))
    await page.click(SUBMIT)
    await page.clock.runFor(100)
    await expect.poll(async () => (await signupState(page)).status, { timeout: 2_000 }).toBe(SLOW_TEXT)
    expect((await signupState(page)).submitted).toEqual([])
    await page.evaluate(() => window.Tollgate.reset())
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

/**
 * A device too slow to end its search during the test: the service's challenges reach the page
 * with 40 bits of difficulty (the workers' download and the service are untouched). CDP's
 * Emulation.setCPUThrottlingRate would not do: it slows the page's main thread, not its workers.
 * The first challenge is held until `release()` (a slow network); `arrived` settles when it was asked for.
 */
async function answerWithAHardChallenge(page: Page): Promise<{ arrived: Promise<void>; release: () => void }> {
  let onArrival = () => {}
  const arrived = new Promise<void>((resolve) => { onArrival = resolve })
  let release = () => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  await page.route('**/api/v1/challenge', async (route) => {
    onArrival()
    await released
    const response = await route.fetch()
    await route.fulfill({ response, json: { ...(await response.json() as Record<string, unknown>), difficulty: 40 } }).catch(() => undefined)
  })
  return { arrived, release }
}

/** Settles when a solver worker has its WebAssembly, just before it starts searching. */
async function workerSearchStarted(page: Page): Promise<void> {
  await page.waitForResponse((response) => response.url().endsWith('.wasm'), { timeout: 15_000 })
}

/** Records every text the sign-up form's status line shows (window.statusTexts). */
async function recordStatusTexts(page: Page): Promise<void> {
  await page.evaluate(() => {
    const region = document.querySelector('#signup-form [data-tollgate-status]')
    const texts: string[] = []
    Object.assign(window, { statusTexts: texts })
    if (region !== null) new MutationObserver(() => texts.push(region.textContent ?? '')).observe(region, { childList: true, characterData: true, subtree: true })
  })
}

async function statusTextsOf(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { statusTexts: string[] }).statusTexts)
}
