/// <reference lib="dom" />
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { apiRequestsFrom, hasChromium, holdFirst, serviceAndBrowser, typeLikeAPerson } from './sdk-support.js'

/** What reached each form of /demo: its own submit listener (the token it saw), and the SDK's events. */
interface FormRecord {
  submitted: string[]
  verified: number
  errors: string[]
}

/** Keeps the page on submit and records, per form id, what reaches the form's own listeners. */
async function recordForms(page: Page): Promise<void> {
  await page.evaluate(() => {
    const records: Record<string, FormRecord> = {}
    for (const form of document.querySelectorAll<HTMLFormElement>('form[data-tollgate]')) {
      const record: FormRecord = { submitted: [], verified: 0, errors: [] }
      records[form.id] = record
      form.addEventListener('submit', (event) => {
        event.preventDefault()
        record.submitted.push(form.querySelector<HTMLInputElement>('input[name="tollgate-token"]')?.value ?? '')
      })
      form.addEventListener('tollgate:verified', () => record.verified++)
      form.addEventListener('tollgate:error', (event) => record.errors.push(event.detail.code))
    }
    Object.assign(window, { records })
  })
}

async function recordOf(page: Page, id: string): Promise<FormRecord> {
  return page.evaluate((formId) => (window as unknown as { records: Record<string, FormRecord> }).records[formId] as FormRecord, id)
}

async function waitUntilDone(page: Page, id: string): Promise<void> {
  await page.waitForFunction((formId) => {
    const record = (window as unknown as { records: Record<string, FormRecord> }).records[formId]
    return record !== undefined && (record.submitted.length > 0 || record.verified > 0 || record.errors.length > 0)
  }, id, { timeout: 25_000 })
}

/** Holds every challenge request until `release()`: each form's early solve waits, and so does its submit. */
async function holdChallenges(page: Page): Promise<{ count: () => number; release: () => void }> {
  let release = () => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  let count = 0
  await page.route('**/api/v1/challenge', async (route) => {
    count++
    await released
    await route.continue().catch(() => undefined)
  })
  return { count: () => count, release }
}

describe.runIf(hasChromium())('single-page apps in Chromium: a form that leaves the page', () => {
  const suite = serviceAndBrowser()

  for (const [what, target] of [['the form', '#signup-form'], ['an element around it', 'section:has(#signup-form)']] as const) {
    it(`reset(${what}) aborts that form's verification only: the other form on the page goes on`, async () => {
      const { page } = await suite.browser.newPage()
      const challenges = await holdChallenges(page)
      await page.goto(`${suite.sdk.origin}/demo`)
      await recordForms(page)
      await typeLikeAPerson(page, '#signup-email', 'lin@example.com')
      await typeLikeAPerson(page, '#contact-message', 'Hello')
      await expect.poll(challenges.count).toBe(2)
      // Both submits wait for their early solves.
      await page.click('#signup-form button[type="submit"]')
      await page.click('#contact-form button[type="submit"]')
      // The component of the sign-up form unmounts; its cleanup resets its own form.
      await page.evaluate((selector) => window.Tollgate.reset(document.querySelector(selector) ?? undefined), target)
      challenges.release()
      await waitUntilDone(page, 'contact-form')
      await waitUntilDone(page, 'signup-form')

      expect(await recordOf(page, 'signup-form')).toEqual({ submitted: [], verified: 0, errors: ['aborted'] })
      const contact = await recordOf(page, 'contact-form')
      expect(contact).toMatchObject({ verified: 1, errors: [] })
      expect(await suite.sdk.siteverify(contact.submitted[0] ?? '')).toMatchObject({ success: true })

      // The form that was reset is not stuck with its aborted early solve: its next submit goes through.
      await page.click('#signup-form button[type="submit"]')
      await page.waitForFunction(() => (window as unknown as { records: Record<string, FormRecord> }).records['signup-form']?.submitted.length === 1, undefined, { timeout: 25_000 })
      const [token = ''] = (await recordOf(page, 'signup-form')).submitted
      expect(await suite.sdk.siteverify(token)).toMatchObject({ success: true })
    })
  }

  it('sends no solution and does not submit a form removed from the page while its submit waits', async () => {
    const { page, events } = await suite.browser.newPage()
    const challenge = await holdFirst(page, '**/api/v1/challenge')
    await page.goto(`${suite.sdk.origin}/demo`)
    await recordForms(page)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com') // the first touch starts the early solve
    await challenge.arrived
    await page.click('#signup-form button[type="submit"]') // the submit waits for the early solve
    const afterRemoval = apiRequestsFrom(page)
    // The single-page app leaves the view without reset(): its form is simply gone.
    await page.evaluate(() => document.querySelector('#signup-form')?.remove())
    challenge.release()
    await waitUntilDone(page, 'signup-form')

    // The early solve stops with its form (its challenge is not solved), and the verification is not spent.
    expect(await recordOf(page, 'signup-form')).toEqual({ submitted: [], verified: 0, errors: ['aborted'] })
    expect(afterRemoval).toEqual([])
    expect(events.errors.filter((error) => /not connected/.test(error))).toEqual([])
  })

  it('stops the early solve of a form that leaves the page, and solves afresh when the form comes back', async () => {
    const { page, events } = await suite.browser.newPage()
    const challenge = await holdFirst(page, '**/api/v1/challenge')
    const cancelled: string[] = []
    page.on('requestfailed', (request) => cancelled.push(new URL(request.url()).pathname))
    await page.goto(`${suite.sdk.origin}/demo`)
    await recordForms(page)
    await typeLikeAPerson(page, '#signup-email', 'lin@example.com') // the first touch starts the early solve
    await challenge.arrived
    // The view goes away (its form kept by the app, as a cached view is), and the early solve with it.
    await page.evaluate(() => {
      const form = document.querySelector('#signup-form')
      Object.assign(window, { kept: form })
      form?.remove()
    })
    await expect.poll(() => cancelled).toEqual(['/api/v1/challenge'])
    challenge.release()

    // The view comes back: its submit fetches a fresh challenge, and its token redeems.
    const afterReturn = apiRequestsFrom(page)
    await page.evaluate(() => document.querySelector('section')?.append((window as unknown as { kept: HTMLFormElement }).kept))
    await page.click('#signup-form button[type="submit"]')
    await waitUntilDone(page, 'signup-form')
    const record = await recordOf(page, 'signup-form')
    expect(record).toMatchObject({ verified: 1, errors: [] })
    expect(afterReturn).toEqual(['/api/v1/challenge', '/api/v1/verify'])
    expect(await suite.sdk.siteverify(record.submitted[0] ?? '')).toMatchObject({ success: true })
    expect(events.errors).toEqual([])
  })
})
