/// <reference lib="dom" />
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { apiRequestsFrom, hasChromium, holdFirst, recordSignup, serviceAndBrowser, signupState, typeLikeAPerson, waitForTheSubmitToEnd } from './sdk-support.js'

const statusOf = (page: Page) => page.textContent('#signup-form [data-tollgate-status]')

describe.runIf(hasChromium())('a form submitted while its early solve runs, in Chromium', () => {
  const suite = serviceAndBrowser()

  /** The demo page with a protected form #late of this markup added after the load, whose #late-email the visitor then touches. */
  async function touchALateForm(markup: string): Promise<Page> {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.waitForFunction(() => 'Tollgate' in window)
    await page.evaluate(([siteKey, innerHtml]) => {
      const form = document.createElement('form')
      form.id = 'late'
      form.dataset.tollgate = ''
      form.dataset.siteKey = siteKey
      form.innerHTML = innerHtml
      document.body.append(form)
    }, [suite.sdk.demoSite.siteKey, markup] as const)
    await page.focus('#late-email')
    return page
  }

  /** Submits the sign-up form and expects it posted a token Siteverify accepts, after these API requests; answers the form's status. */
  async function submitAndRedeem(page: Page, requests: string[], expected: string[]): Promise<string | undefined> {
    await page.click('#signup-form button[type="submit"]')
    await waitForTheSubmitToEnd(page)
    const { submitted: [token = ''], errors, status } = await signupState(page)
    expect(errors).toEqual([])
    expect(requests).toEqual(expected)
    expect(await suite.sdk.siteverify(token)).toMatchObject({ success: true })
    return status
  }

  it('tells the visitor at once that the browser is being checked, then verifies', async () => {
    const { page } = await suite.browser.newPage()
    const challenge = await holdFirst(page, '**/api/v1/challenge') // a slow service
    await page.goto(`${suite.sdk.origin}/demo`)
    await recordSignup(page)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com') // the first touch starts the early solve
    await challenge.arrived
    await page.click('#signup-form button[type="submit"]')

    await expect.poll(() => statusOf(page), { timeout: 2_000 }).toBe('Checking your browser\u2026')
    challenge.release()
    await waitForTheSubmitToEnd(page)
    const { submitted: [token = ''], errors } = await signupState(page)
    expect(errors).toEqual([])
    expect(await suite.sdk.siteverify(token)).toMatchObject({ success: true })
  })

  it('reports the early solve\'s failure at submit instead of asking the service again', async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.waitForFunction(() => 'Tollgate' in window)
    await recordSignup(page)
    // The site owner pasted a key the service does not know.
    await page.evaluate(() => document.querySelector<HTMLFormElement>('#signup-form')?.setAttribute('data-site-key', 'tgk_unknown'))
    const requests = apiRequestsFrom(page)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await expect.poll(() => requests).toEqual(['/api/v1/challenge'])
    await page.click('#signup-form button[type="submit"]')
    await waitForTheSubmitToEnd(page)

    expect(await signupState(page)).toMatchObject({ submitted: [], errors: ['invalid_site_key'], status: expect.stringMatching(/not set up for this site/) as string })
    expect(requests).toEqual(['/api/v1/challenge'])
  })

  it('tries afresh at submit when the early solve failed long before (the connection was down while the visitor typed)', async () => {
    const { page } = await suite.browser.newPage()
    await page.clock.install()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.waitForFunction(() => 'Tollgate' in window)
    await recordSignup(page)
    await page.route('**/api/v1/challenge', (route) => route.abort('internetdisconnected'), { times: 1 })
    const failed = page.waitForEvent('requestfailed')
    const requests = apiRequestsFrom(page)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await failed
    // The visitor comes back to the form a minute later, online again.
    await page.clock.fastForward('01:00')
    await submitAndRedeem(page, requests, ['/api/v1/challenge', '/api/v1/challenge', '/api/v1/verify'])
  })

  it('sends the early solve\'s challenge request once more, 1-2 s after it timed out, and submits with that solve', async () => {
    const { page } = await suite.browser.newPage()
    await page.clock.install()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.waitForFunction(() => 'Tollgate' in window)
    await recordSignup(page)
    const requests = apiRequestsFrom(page)
    // The first challenge request gets no answer at all; the next ones pass.
    const first = await holdFirst(page, '**/api/v1/challenge')
    const failed = page.waitForEvent('requestfailed')
    // The page's clock stands still from here: only what the test runs passes.
    await page.clock.pauseAt(await page.evaluate(() => Date.now() + 100))
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await first.arrived
    await page.clock.runFor(15_000)
    await failed
    await page.clock.runFor(990)
    await new Promise((resolve) => setTimeout(resolve, 500)) // a request sent meanwhile would be seen by now
    expect(requests).toEqual(['/api/v1/challenge'])
    await page.clock.runFor(1_010)
    await expect.poll(() => requests).toEqual(['/api/v1/challenge', '/api/v1/challenge'])
    first.release()
    await page.clock.resume()

    // The solve of the second challenge was submitted: no third was asked for.
    await submitAndRedeem(page, requests, ['/api/v1/challenge', '/api/v1/challenge', '/api/v1/verify'])
  })

  it('starts afresh at submit when the early solve got a 5xx, instead of reporting it', async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.waitForFunction(() => 'Tollgate' in window)
    await recordSignup(page)
    // The service fails the first challenge request (a 500 is not asked again at once).
    await page.route('**/api/v1/challenge', (route) => route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":{"code":"internal_error","message":"Something failed."}}' }), { times: 1 })
    const requests = apiRequestsFrom(page)
    const answered = page.waitForResponse('**/api/v1/challenge')
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    expect((await answered).status()).toBe(500)
    // Submitted at once, well within the ten seconds in which another failure is reported as it is.
    const status = await submitAndRedeem(page, requests, ['/api/v1/challenge', '/api/v1/challenge', '/api/v1/verify'])
    expect(status).toBe('Verified.')
  })

  it('gives a form added after the load its live region at the first touch, before any text is written to it', async () => {
    const page = await touchALateForm('<label>E-mail <input id="late-email" name="email"></label><button>Send</button>')
    const region = await page.evaluate(() => {
      const found = document.querySelector('#late [data-tollgate-status]')
      return found === null ? null : { role: found.getAttribute('role'), live: found.getAttribute('aria-live'), text: found.textContent }
    })
    expect(region).toEqual({ role: 'status', live: 'polite', text: '' })
  })

  it("makes the page's own data-tollgate-status element the live region, styled by the .tollgate-status class as the SDK's own is", async () => {
    const page = await touchALateForm('<p class="hint" data-tollgate-status></p><label>E-mail <input id="late-email" name="email"></label><button>Send</button>')
    const regions = await page.evaluate(() => [...document.querySelectorAll('#late [data-tollgate-status]')].map((found) => ({
      tag: found.tagName,
      classes: [...found.classList],
      role: found.getAttribute('role'),
      live: found.getAttribute('aria-live'),
    })))
    // The page's element, its own class kept; no second region beside it.
    expect(regions).toEqual([{ tag: 'P', classes: ['hint', 'tollgate-status'], role: 'status', live: 'polite' }])
  })
})
