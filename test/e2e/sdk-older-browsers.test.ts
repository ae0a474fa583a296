/// <reference lib="dom" />
import { describe, expect, it } from 'vitest'
import { hasChromium, serviceAndBrowser, typeLikeAPerson } from './sdk-support.js'

describe.runIf(hasChromium())('the SDK in a browser without requestSubmit and SubmitEvent (Safari before 15 and 16), in Chromium', () => {
  const suite = serviceAndBrowser()

  /** /demo in a page that lacks what those browsers lack, taken away before any script of the page runs. */
  async function openDemoWithoutThem() {
    const opened = await suite.browser.newPage()
    await opened.page.addInitScript(() => {
      Reflect.deleteProperty(HTMLFormElement.prototype, 'requestSubmit')
      Reflect.deleteProperty(window, 'SubmitEvent')
    })
    await opened.page.goto(`${suite.sdk.origin}/demo`)
    return opened
  }

  it('submits the protected form with its token, from the button the visitor pressed', async () => {
    const { page, events } = await openDemoWithoutThem()
    expect(await page.evaluate(() => 'requestSubmit' in HTMLFormElement.prototype || 'SubmitEvent' in window)).toBe(false)
    // A button with a name and value: the form sends them only when that button submits it.
    await page.evaluate(() => {
      const button = document.querySelector<HTMLButtonElement>('#signup-form button[type="submit"]')
      if (button !== null) Object.assign(button, { name: 'pressed', value: 'sign-up-button' })
    })
    const posted = page.waitForRequest((request) => request.method() === 'POST' && new URL(request.url()).pathname === '/demo')
    await typeLikeAPerson(page, '#signup-email', 'grace@example.com')
    await page.click('#signup-form button[type="submit"]')
    const fields = new URLSearchParams((await posted).postData() ?? '')
    expect(fields.get('pressed')).toBe('sign-up-button')
    expect(fields.get('tollgate-token')).toMatch(/^v1\./)
    await page.waitForSelector('#verdict')

    expect(await page.textContent('#verdict')).toContain('Siteverify accepted the token')
    expect(await page.textContent('[data-field="success"]')).toBe('true')
    expect(await page.textContent('[data-field="Form"]')).toBe('signup')
    expect(events.errors).toEqual([])
  })

  it('submits a form whose submit comes from a script (no submitter) through a hidden button of its own', async () => {
    const { page, events } = await openDemoWithoutThem()
    await typeLikeAPerson(page, '#signup-email', 'grace@example.com')
    await page.evaluate(() => document.querySelector<HTMLFormElement>('#signup-form')?.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true })))
    await page.waitForSelector('#verdict')

    expect(await page.textContent('[data-field="success"]')).toBe('true')
    expect(events.errors).toEqual([])
  })
})
