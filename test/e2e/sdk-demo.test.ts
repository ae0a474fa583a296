/// <reference lib="dom" />
import { describe, expect, it } from 'vitest'
import { hasChromium, serviceAndBrowser, typeLikeAPerson } from './sdk-support.js'

interface VerifiedDetail {
  form: string
  token: string
}

describe.runIf(hasChromium())('the SDK on /demo in Chromium', () => {
  const suite = serviceAndBrowser()

  it('fills the token, and the server redeems it with Siteverify', async () => {
    const { page, events } = await suite.browser.newPage()
    const submissions: string[] = []
    page.on('request', (request) => {
      if (request.url().endsWith('/api/v1/verify')) submissions.push(request.postData() ?? '')
    })
    await page.goto(`${suite.sdk.origin}/demo`)
    await typeLikeAPerson(page, '#signup-email', 'ada@example.com')
    await page.click('#signup-form button[type="submit"]')
    await page.waitForSelector('#verdict')

    expect(await page.textContent('#verdict')).toContain('Siteverify accepted the token')
    expect(await page.textContent('[data-field="success"]')).toBe('true')
    expect(await page.textContent('[data-field="action"]')).toBe('allow')
    expect(await page.textContent('[data-field="Form"]')).toBe('signup')
    // The page's strict CSP (no eval, no inline, no wasm-unsafe-eval) let everything run, and a
    // newcomer's console shows no error at all (a missing icon was one).
    expect(events.errors).toEqual([])
    // The signals went as hashes and counts; what was typed did not.
    expect(submissions).toHaveLength(1)
    const submission = JSON.parse(submissions[0] ?? '{}') as { fingerprint: Record<string, unknown>; behaviorData: Record<string, number> }
    expect(submission.fingerprint.canvas).toMatch(/^[0-9a-f]{32}$/)
    expect(submission.fingerprint.webgl).toMatch(/^([0-9a-f]{32})?$/)
    expect(submission.behaviorData.keystrokes).toBeGreaterThanOrEqual('ada@example.com'.length)
    expect(submission.behaviorData.mouseMovements).toBeGreaterThan(0)
    expect(submissions[0]).not.toContain('ada@example.com')
  })

  it("says the token was earned at the address the demo's backend sends as remoteip, when the site checks addresses", async () => {
    await suite.sdk.setDemoSettings({ tokenAddressCheck: 'refuse' })
    try {
      const { page } = await suite.browser.newPage()
      await page.goto(`${suite.sdk.origin}/demo`)
      await typeLikeAPerson(page, '#signup-email', 'ada@example.com')
      await page.click('#signup-form button[type="submit"]')
      await page.waitForSelector('#verdict')
      expect(await page.textContent('[data-field="success"]')).toBe('true')
      // The browser solved from 127.0.0.1, and the demo's backend sends the address it sees.
      expect(await page.textContent('[data-field="remoteipMatch"]')).toBe('true')
    } finally {
      await suite.sdk.setDemoSettings({ tokenAddressCheck: 'off' })
    }
  })

  it("does not count the page's own scroll events among the untrusted input, but a script's dispatched key it does", async () => {
    const { page } = await suite.browser.newPage()
    const submissions: string[] = []
    page.on('request', (request) => {
      if (request.url().endsWith('/api/v1/verify')) submissions.push(request.postData() ?? '')
    })
    await page.goto(`${suite.sdk.origin}/demo`)
    // A page that starts its lazy loading by dispatching scroll events, many of them.
    await page.evaluate(() => {
      for (let index = 0; index < 30; index++) window.dispatchEvent(new Event('scroll'))
    })
    await typeLikeAPerson(page, '#signup-email', 'ada@example.com')
    // And one key event a password manager dispatched.
    await page.evaluate(() => document.querySelector('#signup-email')?.dispatchEvent(new KeyboardEvent('keydown', { key: 'a', bubbles: true })))
    await page.click('#signup-form button[type="submit"]')
    await page.waitForSelector('#verdict')

    const { behaviorData } = JSON.parse(submissions[0] ?? '{}') as { behaviorData: Record<string, number> }
    expect(behaviorData.scrolls).toBeGreaterThanOrEqual(30)
    // The page's scrolls are not among the untrusted (the server then weighs one untrusted event
    // against the person's keys and moves: no synthetic_input).
    expect(behaviorData.untrustedEvents).toBe(1)
  })

  it('draws a boundary round its submit buttons in forced colours (WCAG 1.4.11)', async () => {
    const { page } = await suite.browser.newPage()
    await page.emulateMedia({ forcedColors: 'active', colorScheme: 'dark' })
    await page.goto(`${suite.sdk.origin}/demo`)
    const borders = await page.locator('button[type="submit"]').evaluateAll((buttons) => buttons.map((button) => {
      const style = getComputedStyle(button)
      return { width: parseFloat(style.borderTopWidth), style: style.borderTopStyle, color: style.borderTopColor }
    }))
    expect(borders.length).toBeGreaterThan(0)
    for (const border of borders) {
      expect(border.style).toBe('solid')
      expect(border.width).toBeGreaterThanOrEqual(1)
      expect(border.color).not.toBe('rgba(0, 0, 0, 0)')
    }
  })

  it('serves the page with a strict Content-Security-Policy', async () => {
    const response = await fetch(`${suite.sdk.origin}/demo`)
    const policy = response.headers.get('content-security-policy') ?? ''
    expect(policy).toContain("script-src 'self'")
    expect(policy).toContain("worker-src 'self'")
    expect(policy).not.toMatch(/unsafe-(inline|eval)/)
  })

  it('protects two forms on one page independently', async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    // Keep the page: record each form's token and stop the navigation after the SDK filled it.
    await page.evaluate(() => {
      const verified: VerifiedDetail[] = []
      Object.assign(window, { verified })
      for (const form of document.querySelectorAll('form')) {
        form.addEventListener('submit', (event) => {
          event.preventDefault()
          const field = form.querySelector<HTMLInputElement>('input[name="tollgate-token"]')
          verified.push({ form: form.id, token: field?.value ?? '' })
        })
      }
    })
    await typeLikeAPerson(page, '#signup-email', 'grace@example.com')
    await typeLikeAPerson(page, '#contact-message', 'Hello there')
    // Both at once, so that the two verifications run concurrently.
    await page.evaluate(() => {
      for (const id of ['signup-form', 'contact-form']) document.querySelector<HTMLFormElement>(`#${id}`)?.requestSubmit()
    })
    await page.waitForFunction(() => (window as unknown as { verified: unknown[] }).verified.length === 2, undefined, { timeout: 20_000 })
    const verified = await page.evaluate(() => (window as unknown as { verified: VerifiedDetail[] }).verified)

    expect(verified.map((entry) => entry.form).sort()).toEqual(['contact-form', 'signup-form'])
    const [first, second] = verified.map((entry) => entry.token)
    expect(first).not.toBe('')
    expect(second).not.toBe('')
    expect(first).not.toBe(second)
    for (const token of [first ?? '', second ?? '']) {
      expect(await suite.sdk.siteverify(token)).toMatchObject({ success: true, action: 'allow' })
    }
    expect(await page.locator('.tollgate-status[role="status"][aria-live="polite"]').count()).toBe(2)
  })

  it('gives a token through Tollgate.execute() and aborts with reset()', async () => {
    const { page } = await suite.browser.newPage()
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.waitForFunction(() => 'Tollgate' in window)
    const result = await page.evaluate((siteKey) => window.Tollgate.execute({ siteKey }), suite.sdk.demoSite.siteKey)

    expect(result).toMatchObject({ action: 'allow', riskScore: expect.any(Number) as number, token: expect.any(String) as string })
    expect(await suite.sdk.siteverify(result.token)).toMatchObject({ success: true })
    expect(await suite.sdk.siteverify(result.token)).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    // The first answer stopped the other workers, and none outlives the solve.
    await expect.poll(() => page.workers().length).toBe(0)

    const aborted = await page.evaluate(async (siteKey) => {
      const pending = window.Tollgate.execute({ siteKey }).then(() => 'resolved', (error: { code: string }) => error.code)
      window.Tollgate.reset()
      return pending
    }, suite.sdk.demoSite.siteKey)
    expect(aborted).toBe('aborted')
  })

  it('fills the token on the page when its policy also requires Trusted Types, allowing the tollgate policy', async () => {
    const { page, events } = await suite.browser.newPage()
    await page.route('**/demo', async (route) => {
      const response = await route.fetch()
      const policy = `${response.headers()['content-security-policy']}; require-trusted-types-for 'script'; trusted-types tollgate`
      await route.fulfill({ response, headers: { ...response.headers(), 'content-security-policy': policy } })
    })
    await page.goto(`${suite.sdk.origin}/demo`)
    await page.evaluate(() => {
      const form = document.querySelector<HTMLFormElement>('#signup-form')
      form?.addEventListener('submit', (event) => {
        event.preventDefault()
        Object.assign(window, { signup: { token: form.querySelector<HTMLInputElement>('input[name="tollgate-token"]')?.value, error: '' } })
      })
      form?.addEventListener('tollgate:error', (event) => Object.assign(window, { signup: { token: '', error: (event as CustomEvent<{ code: string }>).detail.code } }))
    })
    await typeLikeAPerson(page, '#signup-email', 'ada@example.com')
    await page.click('#signup-form button[type="submit"]')
    await page.waitForFunction(() => 'signup' in window, undefined, { timeout: 20_000 })
    const signup = await page.evaluate(() => (window as unknown as { signup: { token: string; error: string } }).signup)

    expect(signup.error).toBe('')
    expect(await page.textContent('#signup-form [data-tollgate-status]')).toBe('Verified.')
    expect(await suite.sdk.siteverify(signup.token)).toMatchObject({ success: true })
    expect(events.errors.filter((error) => /Content Security Policy|Refused|Trusted/i.test(error))).toEqual([])
  })
})

