/// <reference lib="dom" />
import { describe, expect, it } from 'vitest'
import { apiRequestsFrom, hasChromium, holdFirst, recordSignup, serviceAndBrowser, signupState, typeLikeAPerson, waitForTheSubmitToEnd, type SignupRecord } from './sdk-support.js'

describe.runIf(hasChromium())('reset() during a form submit in Chromium', () => {
  const suite = serviceAndBrowser()

  it('neither fills nor submits the form when reset() comes while the submit waits for the presolve', async () => {
    const { page } = await suite.browser.newPage()
    const challenge = await holdFirst(page, '**/api/v1/challenge')
    await page.goto(`${suite.sdk.origin}/demo`)
    await recordSignup(page)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com') // the first touch starts the presolve
    await challenge.arrived
    await page.click('#signup-form button[type="submit"]') // the submit waits for the presolve
    const afterReset = apiRequestsFrom(page)
    await page.evaluate(() => window.Tollgate.reset()) // the single-page app leaves the view
    challenge.release()
    await waitForTheSubmitToEnd(page)

    expect(await signupState(page)).toEqual({ submitted: [], errors: ['aborted'], token: '', status: '' })
    // No verification started after reset(): nothing can fill or submit the form later either.
    expect(afterReset).toEqual([])

    // The form is not stuck: the next submit verifies and submits as usual.
    await page.click('#signup-form button[type="submit"]')
    await page.waitForFunction(() => (window as unknown as { record: SignupRecord }).record.submitted.length > 0, undefined, { timeout: 25_000 })
    const [token = ''] = (await signupState(page)).submitted
    expect(await suite.sdk.siteverify(token)).toMatchObject({ success: true })
  })

  it('neither fills nor submits the form when reset() comes while the verdict is on its way', async () => {
    const { page } = await suite.browser.newPage()
    const verify = await holdFirst(page, '**/api/v1/verify', true)
    await page.goto(`${suite.sdk.origin}/demo`)
    await recordSignup(page)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await page.click('#signup-form button[type="submit"]')
    await verify.arrived // the service has answered; the page has not seen the answer yet
    const afterReset = apiRequestsFrom(page)
    await page.evaluate(() => window.Tollgate.reset())
    verify.release()
    await waitForTheSubmitToEnd(page)

    expect(await signupState(page)).toEqual({ submitted: [], errors: ['aborted'], token: '', status: '' })
    expect(afterReset).toEqual([])
  })
  it('does not submit the form when a tollgate:verified listener calls reset()', async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await recordSignup(page)
    await page.evaluate(() => {
      document.querySelector('#signup-form')?.addEventListener('tollgate:verified', () => {
        Object.assign(window, { verifiedSeen: true })
        window.Tollgate.reset()
      })
    })
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
    await page.click('#signup-form button[type="submit"]')
    await page.waitForFunction(() => (window as unknown as { verifiedSeen?: boolean }).verifiedSeen === true, undefined, { timeout: 25_000 })
    // The submit would have reached the page's listener synchronously after the event.
    expect(await signupState(page)).toEqual({ submitted: [], errors: [], token: '', status: '' })
  })
})

describe.runIf(hasChromium())('aborting Tollgate.execute() in Chromium', () => {
  const suite = serviceAndBrowser()

  it('sends no request for a signal that was aborted before the call', async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.waitForFunction(() => 'Tollgate' in window)
    const requests = apiRequestsFrom(page)
    const code = await page.evaluate((siteKey) => window.Tollgate.execute({ siteKey, signal: AbortSignal.abort() }).then(
      () => 'resolved',
      (error: { code: string }) => error.code,
    ), suite.sdk.demoSite.siteKey)

    expect(code).toBe('aborted')
    expect(requests).toEqual([])
  })

  it('submits nothing when reset() comes while the browser signals are still being collected', async () => {
    const { page } = await suite.browser.newPage()
    // The SDK collects its fingerprint in an idle callback: hold that callback until released, so
    // that the solved challenge waits for the signals.
    await page.addInitScript(() => {
      const held: (() => void)[] = []
      Object.assign(window, {
        requestIdleCallback: (callback: IdleRequestCallback) => held.push(() => callback({ didTimeout: false, timeRemaining: () => 0 })),
        releaseIdle: () => held.splice(0).forEach((run) => run()),
      })
    })
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.waitForFunction(() => 'Tollgate' in window)
    const requests = apiRequestsFrom(page)
    const code = await page.evaluate(async (siteKey) => {
      const { releaseIdle } = window as unknown as { releaseIdle: () => void }
      return window.Tollgate.execute({
        siteKey,
        onStatus: (status) => {
          if (status !== 'verifying') return
          // Solved; the submission awaits the signals. The single-page app leaves the view.
          window.Tollgate.reset()
          setTimeout(releaseIdle, 50)
        },
      }).then(() => 'resolved', (error: { code: string }) => error.code)
    }, suite.sdk.demoSite.siteKey)

    expect(code).toBe('aborted')
    // The challenge is not spent and no verification is logged for a view the visitor has left.
    expect(requests).toEqual(['/api/v1/challenge'])
  })
})
