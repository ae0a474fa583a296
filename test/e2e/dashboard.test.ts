import { createHmac, timingSafeEqual } from 'node:crypto'
import type { ConsoleMessage, Page, Request } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { startWithinOneEphemeralIdWeek } from '../helpers/ephemeral-id-week.js'
import type { TestApp } from '../helpers/test-app.js'
import {
  expectNoAccessibilityViolations as expectPageWithoutViolations,
  hasChromium,
  openDashboard,
  prepareScreenshotDirectory,
  saveScreenshot,
  startWebhookReceiver,
  submitWrongNonce,
  browserHeaders,
  verifyOnce,
  type Browser,
  type OpenDashboard,
  type WebhookReceiver,
} from './dashboard-support.js'

const email = `owner-${Date.now()}@example.com`
let password = 'correct horse battery staple'
const webhookSecret = 'whsec-e2e-0123456789abcdef'

/**
 * A site owner's first day, in a real Chromium against the real service on embedded storage:
 * sign up, create a site, configure and test its webhook, watch verifications arrive, manage
 * API keys, log out and in, delete the site. The steps share one browser page and run in order.
 */
describe.skipIf(!hasChromium())('the dashboard, end to end in Chromium', () => {
  let dashboard: OpenDashboard
  let service: TestApp
  let origin: string
  let browser: Browser
  let receiver: WebhookReceiver
  let page: Page
  let pageErrors: string[]
  let siteKey = ''
  let secretKey = ''
  let siteId = ''
  let blockedCount = 0
  /** The X-Request-Id of a scripted client's verification, whose reference the log must find. */
  let scriptedRequestId = ''

  beforeAll(async () => {
    ;[dashboard, receiver] = await Promise.all([openDashboard(), startWebhookReceiver(), prepareScreenshotDirectory()])
    ;({ service, origin, browser, page, pageErrors } = dashboard)
  }, 120_000)

  afterAll(async () => {
    await dashboard?.close()
    await receiver?.close()
  })
  // The verifications one test makes are one device's, which a later test shows, only within a week.
  beforeEach(startWithinOneEphemeralIdWeek)

  const expectNoAccessibilityViolations = (screen: string) => expectPageWithoutViolations(page, screen)

  async function waitForText(selector: string, text: string | RegExp) {
    await page.locator(selector).filter({ hasText: text }).first().waitFor({ state: 'visible' })
  }

  /** At a phone's width the page itself does not scroll sideways: wide tables scroll in their own box. */
  async function expectNoSidewaysScrollingOnPhone(screen: string) {
    await page.setViewportSize({ width: 375, height: 740 })
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
    await page.setViewportSize({ width: 1280, height: 800 })
    expect(overflow, `sideways scrolling on the ${screen} screen`).toBe(0)
  }

  /**
   * Holds the page's requests matching `url` (and `method`) until release() is called, so that
   * they are still on their way while the test goes on.
   */
  async function holdRequests(url: string, method: string): Promise<{ release: () => void }> {
    let release = () => {}
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    await page.route(url, async (route) => {
      if (route.request().method() === method) await released
      await route.fallback()
    })
    return { release }
  }

  /** The API as another client of the same account would call it: with the browser's session cookie. */
  async function callApiElsewhere(path: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
    const cookie = (await browser.context.cookies(origin)).map(({ name, value }) => `${name}=${value}`).join('; ')
    return fetch(`${origin}/api/v1${path}`, {
      method: init.method ?? 'GET',
      headers: { cookie, origin, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    })
  }

  /** A session on another device, at another address (whose log-ins have budgets of their own). */
  async function logInElsewhere(): Promise<string> {
    const elsewhere = await service.app.inject({
      method: 'POST',
      url: '/api/v1/sessions',
      headers: { host: new URL(origin).host, origin, 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:135.0) Gecko/20100101 Firefox/135.0' },
      payload: { email, password },
      remoteAddress: '198.51.100.60',
    })
    expect(elsewhere.statusCode).toBe(200)
    const cookie = String(elsewhere.headers['set-cookie']).split(';')[0] ?? ''
    expect((await fetch(`${origin}/api/v1/me`, { headers: { cookie } })).status).toBe(200)
    return cookie
  }

  /** Lets the page handle what it has received (a late answer) before a test checks what did not happen. */
  async function settle() {
    await page.waitForTimeout(300)
  }

  it('opens logged out with no error in the console, not even a failed request', async () => {
    // watchPageErrors lets failed answers pass (a refused form's 400 is the page working): here,
    // Chromium's "Failed to load resource" of a 401 is counted too (GET /api/v1/me gave one).
    const consoleErrors: string[] = []
    const noteError = (message: ConsoleMessage) => {
      if (message.type() === 'error') consoleErrors.push(message.text())
    }
    page.on('console', noteError)
    await page.goto(`${origin}/dashboard/`)
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await settle()
    page.off('console', noteError)
    expect(consoleErrors).toEqual([])
  })

  it('shows the log-in form to a visitor, and signs up with the API validation shown beside the field', async () => {
    await page.goto(`${origin}/dashboard/`)
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await expectNoAccessibilityViolations('log-in')
    await saveScreenshot(page, 'log-in')

    await page.getByRole('link', { name: 'Create an account' }).click()
    await page.getByRole('heading', { name: 'Create your account' }).waitFor()
    await page.getByLabel('E-mail address').fill(email)
    await page.getByLabel('Password').fill('short')
    await page.getByRole('button', { name: 'Create account' }).click()
    // A sentence that says what to do, not the schema's fragment.
    await page.locator('#auth-password-error').waitFor()
    expect(await page.locator('#auth-password-error').textContent()).toBe('Use at least 10 characters.')
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true')
    await expectNoAccessibilityViolations('sign-up with an error')
    await saveScreenshot(page, 'sign-up-error')

    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    expect(await page.locator('.topbar__email').textContent()).toBe(email)
    expect(new URL(page.url()).pathname).toBe('/dashboard/')
  })

  it('creates a site and shows its keys once, with copy buttons and the snippet to paste', async () => {
    await page.getByRole('link', { name: 'Add your first site' }).click()
    await page.getByLabel('Name').fill('Example shop')
    await page.getByLabel('Allowed domains').fill('shop.example\nwww.shop.example')
    await page.getByRole('button', { name: 'Create site' }).click()
    await page.getByRole('heading', { name: 'Example shop is ready' }).waitFor()

    siteKey = await page.getByLabel('Site key', { exact: true }).inputValue()
    secretKey = await page.getByLabel('Secret key', { exact: true }).inputValue()
    const snippet = await page.getByLabel('Snippet', { exact: true }).inputValue()
    expect(siteKey).not.toBe('')
    expect(secretKey).not.toBe('')
    expect(snippet).toContain(`<script src="${origin}/sdk/v1/tollgate.js" data-site-key="${siteKey}" async defer></script>`)
    expect(snippet).toContain('<form data-tollgate')
    const moving = await page.getByText('Moving from Turnstile, reCAPTCHA or hCaptcha?').textContent()
    for (const path of ['/turnstile/v0/api.js', '/recaptcha/api.js', '/recaptcha/enterprise.js', '/1/api.js', '/sdk/v1/compat.js']) expect(moving).toContain(path)
    expect(moving).toContain(`${origin}/turnstile/v0/api.js`)
    // What a vendor's Content-Security-Policy needs besides the host (sdk-vendor-compat.test.ts proves it).
    for (const directive of ['worker-src blob:', "'wasm-unsafe-eval'", 'connect-src']) expect(moving).toContain(directive)
    // A reCAPTCHA Enterprise server has its own call to keep, createAssessment, not Siteverify's path.
    expect(moving).toContain(`POST ${origin}/v1/projects/…/assessments`)
    // Why a site's own Playwright tests are blocked, and the two ways through.
    const automated = await page.getByText('Testing with a headless or automated browser').textContent()
    expect(automated).toContain('1x00000000000000000000AA')
    expect(automated).toContain('Allowed addresses (127.0.0.1 and ::1')

    await page.getByRole('button', { name: 'Copy site key' }).click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(siteKey)
    await page.getByRole('button', { name: 'Copy secret key' }).click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secretKey)
    await page.getByRole('button', { name: 'Copy snippet' }).click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(snippet)
    await expectNoAccessibilityViolations('site created')
    await saveScreenshot(page, 'site-created')

    // The address is the site's now: reloaded (here in a second tab), it opens the site's keys,
    // without the secret key, which was shown once, rather than an empty form.
    expect(new URL(page.url()).pathname).toMatch(/^\/dashboard\/sites\/[0-9a-f-]{36}\/integration$/)
    const reloaded = await browser.context.newPage()
    await reloaded.goto(page.url())
    await reloaded.getByRole('heading', { name: 'Example shop' }).waitFor()
    expect(await reloaded.getByLabel('Site key', { exact: true }).inputValue()).toBe(siteKey)
    expect(await reloaded.getByLabel('Secret key', { exact: true }).count()).toBe(0)
    await reloaded.close()

    await page.getByRole('link', { name: 'Continue to settings' }).click()
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    siteId = /\/dashboard\/sites\/([^/]+)\/settings$/.exec(new URL(page.url()).pathname)?.[1] ?? ''
    expect(siteId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('saves settings, showing a refused value beside its field', async () => {
    await page.getByLabel('Challenge threshold').fill('90')
    await page.getByLabel('Block threshold').fill('80')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await waitForText('#settings-challengeThreshold-error', 'below blockThreshold')
    expect(await page.getByLabel('Challenge threshold').getAttribute('aria-invalid')).toBe('true')
    await expectNoAccessibilityViolations('settings with an error')
    await saveScreenshot(page, 'settings-error')

    // A number the browser cannot read is refused beside its field, not saved as "the default".
    await page.getByLabel('Challenge threshold').fill('30')
    await page.getByLabel('Block threshold').fill('70')
    await page.getByLabel('Difficulty').fill('')
    await page.getByLabel('Difficulty').pressSequentially('2e')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await waitForText('#settings-difficulty-error', 'whole number')
    expect(await page.locator('.notice--success').count()).toBe(0)

    await page.getByLabel('Difficulty').fill('8')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await waitForText('.notice--success', 'Settings saved.')
    expect(await page.locator('.field__error').count()).toBe(0)

    // The values come back from the API after a reload, not from the form's memory.
    await page.reload()
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    expect(await page.getByLabel('Difficulty').inputValue()).toBe('8')
    expect(await page.getByLabel('Block threshold').inputValue()).toBe('70')
    expect(await page.getByLabel('Allowed domains').inputValue()).toBe('shop.example\nwww.shop.example')
    await saveScreenshot(page, 'settings')
  })

  it('shows the settings as the API stored them after a save, and sends only what changed since', async () => {
    const sent: string[] = []
    const recordUpdate = (request: Request) => {
      if (request.method() === 'PUT') sent.push(request.postData() ?? '')
    }
    page.on('request', recordUpdate)
    await page.getByLabel('Allowed domains').fill('Shop.EXAMPLE\nwww.shop.example')
    await page.getByLabel('Difficulty').fill('')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await waitForText('.notice--success', 'the emptied fields are back to their defaults')
    const stored = (await (await callApiElsewhere(`/sites/${siteId}`)).json()) as { domains: string[]; settings: { difficulty: number } }
    expect(stored.domains).toEqual(['shop.example', 'www.shop.example'])
    expect(await page.getByLabel('Difficulty').inputValue()).toBe(String(stored.settings.difficulty))
    expect(await page.getByLabel('Allowed domains').inputValue()).toBe('shop.example\nwww.shop.example')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await waitForText('.notice--success', 'Nothing changed.')
    expect(sent).toHaveLength(1)

    // Another client sets the difficulty meanwhile: a save of another field leaves it as that
    // client set it, and the form shows it.
    expect((await callApiElsewhere(`/sites/${siteId}`, { method: 'PUT', body: { settings: { difficulty: 8 } } })).status).toBe(200)
    await page.getByLabel('Challenge lifetime (seconds)').fill('600')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await waitForText('.notice--success', 'Settings saved.')
    expect(sent.slice(1).map((body) => JSON.parse(body) as unknown)).toEqual([{ settings: { challengeLifetimeSeconds: 600 } }])
    expect(await page.getByLabel('Difficulty').inputValue()).toBe('8')
    page.off('request', recordUpdate)
  })

  it('refuses a domain list edited from a stale read, keeping the domain another client added meanwhile', async () => {
    const added = await callApiElsewhere(`/sites/${siteId}`, { method: 'PUT', body: { domains: ['shop.example', 'www.shop.example', 'elsewhere.example'] } })
    expect(added.status).toBe(200)
    await page.getByLabel('Allowed domains').fill('shop.example\nwww.shop.example\nhere.example')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await waitForText('.notice--error', 'changed elsewhere')
    const stored = (await (await callApiElsewhere(`/sites/${siteId}`)).json()) as { domains: string[] }
    expect(stored.domains).toEqual(['shop.example', 'www.shop.example', 'elsewhere.example'])
    // The edit is still in the field; after a reload the page shows both clients' state and saves.
    expect(await page.getByLabel('Allowed domains').inputValue()).toBe('shop.example\nwww.shop.example\nhere.example')
    await page.reload()
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    expect(await page.getByLabel('Allowed domains').inputValue()).toBe('shop.example\nwww.shop.example\nelsewhere.example')
    await page.getByLabel('Allowed domains').fill('shop.example\nwww.shop.example')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await waitForText('.notice--success', 'Settings saved.')
  })

  it('keeps an address allowlist, refusing an entry that is not an address beside the field and showing the stored ranges', async () => {
    await page.getByLabel('Allowed addresses').fill('203.0.113.7/24\nnot-an-address')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await waitForText('#settings-allowedAddresses-error', '"not-an-address"')
    expect(await page.getByLabel('Allowed addresses').getAttribute('aria-invalid')).toBe('true')
    await page.getByLabel('Allowed addresses').fill('203.0.113.7/24\n2001:DB8:0::1')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await waitForText('.notice--success', 'Settings saved.')
    expect(await page.getByLabel('Allowed addresses').inputValue()).toBe('203.0.113.0/24\n2001:db8::1')
    const stored = (await (await callApiElsewhere(`/sites/${siteId}`)).json()) as { settings: { allowedAddresses: string[] } }
    expect(stored.settings.allowedAddresses).toEqual(['203.0.113.0/24', '2001:db8::1'])
  })

  it('sets a webhook with a secret that is never shown back, and sends a signed test event', async () => {
    await page.getByRole('link', { name: 'Webhook' }).click()
    await page.getByRole('heading', { name: 'Webhook', exact: true }).waitFor()
    expect(await page.title()).toBe('Webhook · Example shop · Tollgate')
    await page.getByLabel('Webhook URL').fill(receiver.url)
    await page.getByRole('button', { name: 'Save webhook' }).click()
    await waitForText('#webhook-secret-error', 'required')

    await page.getByLabel('Signing secret').fill(webhookSecret)
    // Typed as a person might; saved, the field shows the URL as stored, the one deliveries go to.
    await page.getByLabel('Webhook URL').fill(` ${receiver.url.replace('http://', 'HTTP://')} `)
    await page.getByRole('button', { name: 'Save webhook' }).click()
    await waitForText('.notice--success', 'Webhook saved.')
    await waitForText('#webhook-secret-status', 'Secret is set')
    expect(await page.getByLabel('Signing secret').inputValue()).toBe('')
    expect(await page.getByLabel('Webhook URL').inputValue()).toBe(receiver.url)
    await page.reload()
    await waitForText('#webhook-secret-status', 'Secret is set')
    expect(await page.getByLabel('Webhook URL').inputValue()).toBe(receiver.url)
    expect(await page.getByLabel('Signing secret').inputValue()).toBe('')
    expect(await page.content()).not.toContain(webhookSecret)

    await page.getByRole('button', { name: 'Send test event' }).click()
    await waitForText('.test-outcome', 'Delivered: HTTP 200')
    expect(receiver.received).toHaveLength(1)
    const [delivery] = receiver.received
    const expected = `sha256=${createHmac('sha256', webhookSecret).update(delivery?.body ?? '').digest('hex')}`
    const signature = String(delivery?.headers['x-service-signature'])
    expect(signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected))).toBe(true)

    // Surge events too: chosen, saved, still chosen after a reload; and a sample of one sent.
    expect(await page.getByRole('checkbox', { name: /verification\.blocked/ }).isChecked()).toBe(true)
    expect(await page.getByRole('checkbox', { name: /surge\.started/ }).isChecked()).toBe(false)
    await page.getByRole('checkbox', { name: /surge\.started/ }).check()
    await page.getByRole('checkbox', { name: /surge\.ended/ }).check()
    await page.getByRole('button', { name: 'Save webhook' }).click()
    await waitForText('.notice--success', 'Webhook saved.')
    await page.reload()
    await page.getByRole('checkbox', { name: /surge\.ended/ }).waitFor()
    for (const event of ['verification.blocked', 'surge.started', 'surge.ended']) {
      expect(await page.getByRole('checkbox', { name: new RegExp(event.replace('.', '\\.')) }).isChecked()).toBe(true)
    }
    await page.getByLabel('Event', { exact: true }).selectOption('surge.started')
    await page.getByRole('button', { name: 'Send test event' }).click()
    await waitForText('.test-outcome', '(surge.started)')
    expect(await page.locator('.test-outcome').textContent()).toMatch(/^Delivered: HTTP 200, \d+ ms \(surge\.started\)\.$/)
    expect(receiver.received).toHaveLength(2)
    expect(receiver.received[1]?.headers['x-service-event']).toBe('surge.started')
    expect(JSON.parse(receiver.received[1]?.body ?? '{}')).toMatchObject({ event: 'surge.started', test: true, data: { threshold: 600 } })

    // Generate makes a secret Standard Webhooks libraries take as it is; saved, the one it replaces
    // keeps signing beside it for 24 hours, and the page says until when.
    await page.getByRole('button', { name: 'Generate' }).click()
    expect(await page.getByLabel('Signing secret').inputValue()).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    await page.getByRole('button', { name: 'Save webhook' }).click()
    await waitForText('.notice--success', 'Webhook saved.')
    await waitForText('#webhook-secret-hint', 'The secret it replaced also signs until')

    await waitForText('.table tbody tr', 'Delivered')
    await expectNoAccessibilityViolations('webhook')
    await saveScreenshot(page, 'webhook')
  })

  it('charts verifications by action once a few arrive', async () => {
    // Visitors' browsers, scripts, and one wrong proof of work: whatever the risk model decides
    // for each, the dashboard must show exactly the outcomes the API answered.
    const expected: Record<string, number> = { allow: 0, challenge: 0, block: 0, rejected: 1 }
    // By the lowest score of their bucket of ten (100 in 90); the wrong proof of work has no score.
    const scores = new Map<number, number>()
    const count = ({ action, riskScore }: { action: string; riskScore: number }) => {
      expected[action] = (expected[action] ?? 0) + 1
      const bucket = Math.min(90, Math.floor(riskScore / 10) * 10)
      scores.set(bucket, (scores.get(bucket) ?? 0) + 1)
    }
    // The page actions of the forms they came from: five sign-ups and three log-ins.
    for (let round = 0; round < 8; round += 1) {
      count(await verifyOnce(origin, siteKey, browserHeaders('https://shop.example'), { pageAction: round < 5 ? 'signup' : 'login' }))
    }
    for (let round = 0; round < 3; round += 1) {
      const verified = await verifyOnce(origin, siteKey)
      scriptedRequestId = verified.requestId
      count(verified)
    }
    expect(await submitWrongNonce(origin, siteKey)).toBe(400)
    blockedCount = expected.block ?? 0

    await page.getByRole('link', { name: 'Analytics' }).click()
    // The log is written in batches off the response path: refresh until every entry is counted.
    const total = page.locator('.totals__item[data-action="total"] .totals__value')
    for (let attempt = 0; attempt < 40 && (await total.textContent()) !== '12'; attempt += 1) {
      await page.waitForTimeout(250)
      await page.getByRole('button', { name: 'Refresh' }).click()
      await total.waitFor()
    }
    expect(await total.textContent()).toBe('12')
    for (const [action, count] of Object.entries(expected)) {
      expect(await page.locator(`.totals__item[data-action="${action}"] .totals__value`).textContent(), action).toBe(String(count))
    }

    // uPlot drew the chart, and the table behind it holds the same counts.
    const canvas = page.locator('.chart canvas')
    expect(await canvas.count()).toBe(1)
    expect((await canvas.boundingBox())?.height ?? 0).toBeGreaterThan(150)
    await page.getByText('Show the numbers as a table').click()
    for (const [action, count] of Object.entries(expected)) {
      const cells = await page.locator(`.buckets td[data-action="${action}"]`).allTextContents()
      expect(cells, action).toHaveLength(24)
      expect(cells.reduce((sum, cell) => sum + Number(cell), 0), action).toBe(count)
    }
    await page.getByText('Show the numbers as a table').click()
    // Scripts send no Origin: DESIGN section 3 names that anomaly.
    await waitForText('#anomalies-heading + table', 'missing_origin')
    // Every scored verification in its bucket, the thresholds marked; and only the browsers' pages named a host.
    for (let min = 0; min <= 90; min += 10) {
      expect(await page.locator(`.scores tr[data-min="${min}"] td`).first().textContent(), `scores from ${min}`).toBe(String(scores.get(min) ?? 0))
    }
    expect(await page.locator('.scores__threshold').allTextContents()).toEqual(['Challenge threshold: 30', 'Block threshold: 70'])
    const reaching = (threshold: number) => [...scores].reduce((sum, [min, count]) => sum + (min >= threshold ? count : 0), 0)
    const caught = await page.locator('.scores__caught li').allTextContents()
    expect(caught[0]).toContain(`Challenge threshold (30): ${reaching(30)} of 11 scored verifications`)
    expect(caught[1]).toContain(`Block threshold (70): ${reaching(70)} of 11 scored verifications`)
    expect(await page.locator('#hostnames-heading + table tbody th').allTextContents()).toEqual(['shop.example'])
    expect(await page.locator('#hostnames-heading + table tbody td').first().textContent()).toBe('8')
    // Its share is of the scored verifications (11), the rejected one's hostname not being counted.
    expect(await page.locator('#hostnames-heading + table tbody td').nth(1).textContent()).toBe('73%')
    expect(await page.locator('#page-actions-heading + table tbody th').allTextContents()).toEqual(['signup', 'login'])
    expect(await page.locator('#page-actions-heading + table tbody td').first().textContent()).toBe('5')
    // Each allowed verification issued a token, and nobody redeemed one here: the card says so.
    const issued = expected.allow ?? 0
    expect(await page.locator('[data-siteverify-summary]').textContent()).toBe(
      issued === 0 ? '0 tokens redeemed by your server; none issued.' : `0 of ${issued} tokens issued redeemed by your server (0%).`,
    )
    expect(await page.getByText('No token of this site was sent to Siteverify in this range.').count()).toBe(1)
    expect(await page.getByText('Your server redeemed none of the tokens issued in this range.').count()).toBe(issued >= 5 ? 1 : 0)
    await expectNoAccessibilityViolations('analytics')
    await saveScreenshot(page, 'analytics')

    // While another range loads, the numbers on screen stay named by their own range, dimmed as busy.
    const weekStats = await holdRequests('**/stats?**', 'GET')
    const weekRequest = page.waitForRequest((request) => new URL(request.url()).pathname.endsWith('/stats'))
    await page.getByText('Last 7 days').click()
    await weekRequest
    expect(await page.locator('.totals').getAttribute('aria-label')).toBe('Totals, last 24 hours')
    await waitForText('.toolbar .loading', 'Loading last 7 days…')
    expect(await page.locator('.stats').getAttribute('aria-busy')).toBe('true')
    await page.waitForFunction(() => {
      const stats = document.querySelector('.stats')
      return stats !== null && Number(getComputedStyle(stats).opacity) < 0.5
    })
    weekStats.release()
    await page.locator('.stats[aria-busy="false"]').waitFor()
    await page.unroute('**/stats?**')
    expect(await page.locator('.totals').getAttribute('aria-label')).toBe('Totals, last 7 days')
    expect(await page.locator('.toolbar .loading').count()).toBe(0)
    await page.locator('.chart canvas').waitFor()
    await waitForText('.totals__item[data-action="total"] .totals__value', '12')
    // The range is in the address: a reload (or a shared link) opens the same view.
    expect(new URL(page.url()).searchParams.get('range')).toBe('7d')
    await page.reload()
    await waitForText('.totals__item[data-action="total"] .totals__value', '12')
    expect(await page.getByRole('radio', { name: 'Last 7 days' }).isChecked()).toBe(true)
    await page.getByText('Last 30 days').click()
    // The 7 days' total is 12 too: the range's own label says the 30 days' numbers are in.
    await page.locator('.totals[aria-label="Totals, last 30 days"]').waitFor()
    await page.locator('.stats[aria-busy="false"]').waitFor()
    await waitForText('.totals__item[data-action="total"] .totals__value', '12')
    await page.getByText('Show the numbers as a table').click()
    await expect.poll(() => page.locator('.buckets tbody tr').count()).toBe(30)
    await page.getByText('Show the numbers as a table').click()
    await page.getByText('Last 24 hours').click()
    await waitForText('.totals', 'Verifications')

    // A range whose numbers fail to load shows the error, not the previous range's numbers under its name.
    await page.route('**/stats?**', (route) =>
      route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { code: 'service_unavailable', message: 'A dependency of the service is unavailable; retry later.', requestId: 'r-3' } }) }))
    await page.getByText('Last 7 days').click()
    await waitForText('.notice--error', 'retry later')
    expect(await page.locator('.totals').count()).toBe(0)
    await page.unroute('**/stats?**')
    pageErrors.splice(0, pageErrors.length, ...pageErrors.filter((error) => !/status of 503/.test(error)))
    await page.getByRole('button', { name: 'Refresh' }).click()
    await waitForText('.totals__item[data-action="total"] .totals__value', '12')
    await page.getByText('Last 24 hours').click()
  })

  it('pages through the verification log and filters it by action', async () => {
    await page.getByRole('link', { name: 'Verification log' }).click()
    await page.getByRole('heading', { name: 'Verification log' }).waitFor()
    // Each section of a site has a window title of its own.
    expect(await page.title()).toBe('Verification log · Example shop · Tollgate')
    const rows = page.locator('.log tbody tr')
    await rows.first().waitFor()
    expect(await rows.count()).toBe(12)
    await expectNoAccessibilityViolations('verification log')
    await saveScreenshot(page, 'verification-log')

    // The rows on screen while another page size loads are dimmed as busy.
    const smallerPage = await holdRequests('**/verifications?**', 'GET')
    await page.getByLabel('Rows').selectOption('10')
    await page.waitForFunction(() => {
      const rows = document.querySelector('.log')?.closest('[aria-busy="true"]')
      return rows !== null && rows !== undefined && Number(getComputedStyle(rows).opacity) < 0.5
    })
    smallerPage.release()
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 10)
    await page.unroute('**/verifications?**')
    const idsOf = () => rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-id')))
    const firstPage = await idsOf()
    // With the keyboard: Older, pressed on the last page but one, and Newer, on the second, keep the
    // focus once the page they lead to leaves them unavailable (disabled, they dropped it to the
    // page's start).
    const focusedText = () => page.evaluate(() => document.activeElement?.textContent?.trim())
    await page.getByRole('button', { name: 'Older' }).focus()
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 2)
    expect(await page.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true)
    expect(await focusedText()).toBe('Older')
    const secondPage = await idsOf()
    expect(secondPage.some((id) => firstPage.includes(id))).toBe(false)
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('Enter')
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 10)
    expect(await idsOf()).toEqual(firstPage)
    await waitForText('.pager__position', 'Page 1')
    expect(await page.getByRole('button', { name: 'Newer' }).isDisabled()).toBe(true)
    expect(await focusedText()).toBe('Newer')

    // An older page that fails to load: the error, no rows of another page under its number, and
    // Older waits (it used to count pages up without loading any); Newer leads back.
    await page.route('**/verifications?*cursor=*', (route) =>
      route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { code: 'service_unavailable', message: 'A dependency of the service is unavailable; retry later.', requestId: 'r-4' } }) }))
    await page.getByRole('button', { name: 'Older' }).click()
    await waitForText('.notice--error', 'retry later')
    expect(await rows.count()).toBe(0)
    await waitForText('.pager__position', 'Page 2')
    expect(await page.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true)
    await page.unroute('**/verifications?*cursor=*')
    pageErrors.splice(0, pageErrors.length, ...pageErrors.filter((error) => !/status of 503/.test(error)))
    await page.getByRole('button', { name: 'Newer' }).click()
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 10)
    expect(await idsOf()).toEqual(firstPage)
    await page.getByRole('button', { name: 'Older' }).click()
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 2)
    await page.getByRole('button', { name: 'Newer' }).click()
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 10)

    await page.getByLabel('Action').selectOption('rejected')
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 1)
    expect(await rows.first().getAttribute('data-action')).toBe('rejected')
    // The filter and the page size are in the address, and a reload keeps them.
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ action: 'rejected', rows: '10' })
    await page.reload()
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 1)
    expect(await page.getByLabel('Action').inputValue()).toBe('rejected')
    expect(await page.getByLabel('Rows').inputValue()).toBe('10')
    expect(await rows.first().textContent()).toContain('solution_invalid')
    await page.getByLabel('Action').selectOption('allow')
    await page.waitForFunction(() => [...document.querySelectorAll('.log tbody tr')].every((row) => row.getAttribute('data-action') === 'allow'))
    await page.getByLabel('Action').selectOption('')
  })

  it("finds a visitor's verification by the reference they were shown", async () => {
    const rows = page.locator('.log tbody tr')
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 10)
    // What a turned-away visitor reads out: the first 13 characters of the verify answer's X-Request-Id.
    const reference = scriptedRequestId.slice(0, 13)
    expect(reference).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}$/)
    const search = page.getByRole('search', { name: "Find a visitor's reference" })
    await search.getByLabel('Reference').fill('not-a-reference')
    await search.getByRole('button', { name: 'Find' }).click()
    await waitForText('#log-reference-hint', 'hexadecimal digits')
    expect(await search.getByLabel('Reference').getAttribute('aria-invalid')).toBe('true')
    expect(await rows.count()).toBe(10)

    // None of this site's verifications has this reference.
    await search.getByLabel('Reference').fill('00000000-0000')
    await search.getByRole('button', { name: 'Find' }).click()
    await waitForText('.card p.muted', 'No verification of this site has a reference beginning with 00000000-0000')

    // An action filter left on (rejected, which the scripted client's verification is not) does not hide it.
    await page.getByLabel('Action').selectOption('rejected')
    await search.getByLabel('Reference').fill(` ${reference.toUpperCase()} `)
    await search.getByRole('button', { name: 'Find' }).click()
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 1)
    expect(await rows.first().getAttribute('data-id')).toBe(scriptedRequestId)
    expect(await page.getByLabel('Action').inputValue()).toBe('')
    // Each row shows its reference, as its visitor saw it.
    expect(await rows.first().locator('.log__reference .code').textContent()).toBe(reference)
    await waitForText('#log-reference-hint', `begins with ${reference.toUpperCase()}`)
    expect(new URL(page.url()).searchParams.get('reference')).toBe(reference.toUpperCase())
    await expectNoAccessibilityViolations('verification log found by reference')
    await page.reload()
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 1)
    expect(await page.getByRole('textbox', { name: 'Reference' }).inputValue()).toBe(reference.toUpperCase())

    await page.getByRole('button', { name: 'Show all' }).click()
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 10)
    expect(new URL(page.url()).searchParams.has('reference')).toBe(false)
  })

  it("finds a reference among all the account's sites from the list of sites, and leads to it in its site's log", async () => {
    const reference = scriptedRequestId.slice(0, 13)
    const logAddress = page.url()
    await page.getByRole('navigation').getByRole('link', { name: 'Sites' }).click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    const search = page.getByRole('search', { name: "Find a visitor's reference" })
    await search.getByLabel('Reference').fill('00000000-0000')
    await search.getByRole('button', { name: 'Find' }).click()
    await waitForText('#reference-heading ~ p.muted', 'No verification of your sites has a reference beginning with 00000000-0000')

    await search.getByLabel('Reference').fill(reference)
    await search.getByRole('button', { name: 'Find' }).click()
    const matches = page.getByRole('list', { name: 'Verifications found' }).getByRole('listitem')
    await page.waitForFunction((id) => document.querySelector(`.reference-matches li[data-id="${id}"]`) !== null, scriptedRequestId)
    expect(await matches.count()).toBe(1)
    expect(await matches.first().textContent()).toMatch(new RegExp(`^Example shop ${reference} block risk \\d+ `))
    // Announced to a screen reader, and each link named by its site and reference.
    expect(await page.getByRole('status').filter({ hasText: 'One verification found.' }).count()).toBe(1)
    expect(await matches.first().getByRole('link').textContent()).toBe(`Example shop ${reference}`)
    expect(new URL(page.url()).searchParams.get('reference')).toBe(reference)
    await expectNoAccessibilityViolations('reference found among the sites')
    await saveScreenshot(page, 'reference-finder')

    await matches.first().getByRole('link', { name: `Example shop ${reference}` }).click()
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 1)
    expect(new URL(page.url()).pathname).toBe(`/dashboard/sites/${siteId}/log`)
    expect(new URL(page.url()).searchParams.get('reference')).toBe(reference)
    expect(await page.locator('.log tbody tr').first().getAttribute('data-id')).toBe(scriptedRequestId)
    expect(await page.getByRole('textbox', { name: 'Reference' }).inputValue()).toBe(reference)
    await page.goto(logAddress)
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 10)
  })

  it("shows a device's verifications from a row's device, and all devices again", async () => {
    const rows = page.locator('.log tbody tr')
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 10)
    // Every scripted verification came with the same device's fingerprint; the wrong proof of work with none.
    expect(await page.locator('.log tbody tr[data-action="rejected"] .log__device').count()).toBe(0)
    const deviceButton = page.locator(`.log tbody tr[data-id="${scriptedRequestId}"]`).getByRole('button', { name: /^Show the verifications of device [0-9a-f]{8}$/ })
    const device = (await deviceButton.getAttribute('title'))?.match(/^Device ([0-9a-f]{24}): show its verifications$/)?.[1] ?? ''
    expect(device).toMatch(/^[0-9a-f]{24}$/)
    await deviceButton.click()
    await waitForText('.log-filter', `Verifications of device ${device}`)
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr[data-action="rejected"]').length === 0 && document.querySelectorAll('.log tbody tr').length === 10)
    expect(new URL(page.url()).searchParams.get('device')).toBe(device)
    expect(await rows.locator('.log__device').count()).toBe(10)
    await expectNoAccessibilityViolations('verification log of one device')
    await saveScreenshot(page, 'verification-log-device')
    // The eleventh of its verifications is on the next page.
    await page.getByRole('button', { name: 'Older' }).click()
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr').length === 1)
    await page.getByRole('button', { name: 'All devices' }).click()
    await page.waitForFunction(() => document.querySelectorAll('.log tbody tr[data-action="rejected"]').length === 1)
    expect(new URL(page.url()).searchParams.has('device')).toBe(false)
    // The button is gone with the filter: the keyboard's place is the log's heading.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('log-heading')
  })

  it("names the browser's time zone with every local time (here Asia/Tokyo)", async () => {
    const tokyo = await browser.context.newPage()
    try {
      const devtools = await browser.context.newCDPSession(tokyo)
      await devtools.send('Emulation.setTimezoneOverride', { timezoneId: 'Asia/Tokyo' })
      await tokyo.goto(page.url())
      await tokyo.locator('.log tbody tr').first().waitFor()
      expect(await tokyo.locator('.log thead th').first().textContent()).toBe('Time (Asia/Tokyo)')
      // A time on its own carries its zone: the account's sessions, logged in a moment ago.
      await tokyo.goto(`${origin}/dashboard/account`)
      const loggedIn = await tokyo.locator('table tbody tr td').nth(2).textContent()
      expect(loggedIn).toMatch(/GMT\+9|JST/)
    } finally {
      await tokyo.close()
    }
  })

  it("labels the chart's hours in the browser's language (here German: 24-hour times)", async () => {
    const german = await browser.context.newPage()
    try {
      const devtools = await browser.context.newCDPSession(german)
      await devtools.send('Emulation.setLocaleOverride', { locale: 'de-DE' })
      await german.goto(`${origin}/dashboard/sites/${siteId}`)
      const chart = german.locator('.chart .u-over')
      await chart.waitFor()
      // Hovering a bucket shows its time in the legend, as the axis labels its ticks (on the canvas).
      const box = await chart.boundingBox()
      await german.mouse.move((box?.x ?? 0) + (box?.width ?? 0) * 0.9, (box?.y ?? 0) + (box?.height ?? 0) / 2)
      const legend = german.locator('.chart .u-legend .u-series').first().locator('.u-value')
      await german.waitForFunction(() => /\d/.test(document.querySelector('.chart .u-legend .u-series .u-value')?.textContent ?? ''))
      // "25. Nov., 14:00", where uPlot's own label is "2026-11-25 2:00pm".
      expect(await legend.textContent()).toMatch(/^\d{1,2}\. [A-Z][a-zä]{2}\.?, \d{1,2}:00$/)
    } finally {
      await german.close()
    }
  })

  it('lists the deliveries of blocked verifications, and removes the webhook after a confirmation', async () => {
    await page.getByRole('link', { name: 'Webhook' }).click()
    const rows = page.locator('.table tbody tr')
    // Deliveries are fire-and-forget: refresh until the two test sends and one per blocked verification are listed.
    const testSends = 2
    for (let attempt = 0; attempt < 40 && (await rows.count()) !== testSends + blockedCount; attempt += 1) {
      await page.waitForTimeout(250)
      await page.getByRole('button', { name: 'Refresh' }).click()
    }
    expect(await rows.count()).toBe(testSends + blockedCount)
    expect(receiver.received).toHaveLength(testSends + blockedCount)
    expect(await rows.filter({ hasText: 'test' }).count()).toBe(testSends)
    expect(await rows.filter({ hasText: 'surge.started' }).count()).toBe(1)
    // Each row names the delivery as its receiver got it, so the two can be matched.
    for (const request of receiver.received) {
      expect(await rows.filter({ hasText: String(request.headers['x-service-delivery']) }).count()).toBe(1)
    }
    // A blocked verification's row links to its row in the log by the payload's verificationId; the others link nowhere.
    const blocked = receiver.received.filter((request) => {
      const body = JSON.parse(request.body) as { event: string; test?: true }
      return body.event === 'verification.blocked' && body.test !== true
    })
    expect(blocked.length).toBeGreaterThan(0)
    for (const request of blocked) {
      const verificationId = (JSON.parse(request.body) as { data: { verificationId: string } }).data.verificationId
      const row = rows.filter({ hasText: String(request.headers['x-service-delivery']) })
      expect(await row.getByRole('link', { name: verificationId.slice(0, 13) }).getAttribute('href')).toContain(`reference=${verificationId}`)
    }
    expect(await page.locator('.table tbody tr a').count()).toBe(blocked.length)

    // A removal that fails closes the dialog and says so on the page, instead of behind the modal.
    const sitePath = new URL(page.url()).pathname.split('/').filter(Boolean).slice(-2, -1)[0] ?? ''
    await page.route(`**/api/v1/sites/${sitePath}`, (route) =>
      route.request().method() === 'PUT'
        ? route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { code: 'service_unavailable', message: 'A dependency of the service is unavailable; retry later.', requestId: 'r-2' } }) })
        : route.continue(),
    )
    await page.getByRole('button', { name: 'Remove webhook' }).click()
    await page.getByRole('dialog', { name: 'Remove the webhook?' }).getByRole('button', { name: 'Remove webhook' }).click()
    await waitForText('.notice--error', 'retry later')
    await page.getByRole('dialog', { name: 'Remove the webhook?' }).waitFor({ state: 'hidden', timeout: 5_000 })
    await page.unroute(`**/api/v1/sites/${sitePath}`)
    pageErrors.splice(0, pageErrors.length, ...pageErrors.filter((error) => !/status of 503/.test(error)))

    await page.getByRole('button', { name: 'Remove webhook' }).click()
    await page.getByRole('dialog', { name: 'Remove the webhook?' }).getByRole('button', { name: 'Remove webhook' }).click()
    await waitForText('.notice--success', 'Webhook removed.')
    await waitForText('#webhook-secret-status', 'No secret set')
    expect(await page.getByLabel('Webhook URL').inputValue()).toBe('')
    expect(await page.getByRole('button', { name: 'Send test event' }).isDisabled()).toBe(true)

    // A secret saved before its URL outlives a second save with the URL still empty.
    await page.getByLabel('Signing secret').fill(webhookSecret)
    await page.getByRole('button', { name: 'Save webhook' }).click()
    await waitForText('#webhook-secret-status', 'Secret is set')
    const saved = page.waitForResponse((response) => response.request().method() === 'PUT' && response.url().includes('/api/v1/sites/'))
    await page.getByRole('button', { name: 'Save webhook' }).click()
    expect((await saved).status()).toBe(200)
    await page.reload()
    await waitForText('#webhook-secret-status', 'Secret is set')
  })

  it('stays usable on a phone-sized screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    for (const [tab, name] of [
      ['Analytics', 'phone-analytics'],
      ['Settings', 'phone-settings'],
    ] as const) {
      await page.getByRole('link', { name: tab, exact: true }).click()
      await page.waitForLoadState('networkidle')
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
      expect(overflow, `horizontal scrolling on the ${tab} screen`).toBeLessThanOrEqual(0)
      await saveScreenshot(page, name)
    }
    // The narrowest width WCAG asks for (1.4.10), with the account's e-mail address on the page.
    await page.setViewportSize({ width: 320, height: 640 })
    await page.getByRole('link', { name: 'Account', exact: true }).click()
    await page.getByText('Logged in as').waitFor()
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    expect(overflow, 'horizontal scrolling on the Account screen at 320 px').toBeLessThanOrEqual(0)
    await page.goBack()
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  it('rotates the secret key after a confirmation, shows the new one once, and ends the old one\'s grace period on request', async () => {
    await page.getByRole('link', { name: 'Keys and snippet' }).click()
    expect(await page.getByLabel('Secret key', { exact: true }).count()).toBe(0)
    expect(await page.getByRole('heading', { name: 'Previous secret keys', exact: true }).count()).toBe(0)
    await page.getByRole('button', { name: 'Rotate secret key' }).click()
    const dialog = page.getByRole('dialog', { name: 'Rotate the secret key?' })
    await dialog.waitFor()
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })

    await page.getByRole('button', { name: 'Rotate secret key' }).click()
    expect(await dialog.getByRole('checkbox', { name: /Stop the current key at once/ }).isChecked()).toBe(false)
    await dialog.getByRole('button', { name: 'Rotate secret key' }).click()
    await waitForText('.notice--success', 'The old one keeps working until')
    const rotated = await page.getByLabel('Secret key', { exact: true }).inputValue()
    expect(rotated).not.toBe('')
    expect(rotated).not.toBe(secretKey)
    await page.getByRole('heading', { name: 'Previous secret keys', exact: true }).waitFor()
    await expectNoAccessibilityViolations('keys and snippet')
    await saveScreenshot(page, 'keys-and-snippet')
    // Rotating again within the grace period says the key deployed before keeps working.
    await page.getByRole('button', { name: 'Rotate secret key' }).click()
    expect(await dialog.innerText()).toContain('The key the last rotation replaced keeps working too')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })

    await page.getByRole('button', { name: 'Stop the previous keys now' }).click()
    await page.getByRole('dialog', { name: 'Stop the previous secret keys?' }).getByRole('button', { name: 'Stop the previous keys' }).click()
    await page.getByRole('heading', { name: 'Previous secret keys', exact: true }).waitFor({ state: 'detached' })
    // The new key is still on screen: the page reloaded the site, not the panel.
    expect(await page.getByLabel('Secret key', { exact: true }).inputValue()).toBe(rotated)
    // And the rotation's notice no longer promises the old key's grace period.
    expect(await page.locator('.notice--success').innerText()).toContain('The old one no longer works.')

    // A leaked key is stopped at once: no grace period to end.
    await page.getByRole('button', { name: 'Rotate secret key' }).click()
    await dialog.getByRole('checkbox', { name: /Stop the current key at once/ }).check()
    await dialog.getByRole('button', { name: 'Rotate secret key' }).click()
    // The notice of the step before says the same words: wait for the new key itself.
    await vi.waitFor(async () => expect(await page.getByLabel('Secret key', { exact: true }).inputValue()).not.toBe(rotated), { timeout: 5_000, interval: 50 })
    await waitForText('.notice--success', 'The old one no longer works.')
    expect(await page.getByRole('heading', { name: 'Previous secret keys', exact: true }).count()).toBe(0)
  })

  // Each key made asks for the password (a wrong one counts against the log-in's budget of this
  // browser and account, 10 in 10 minutes, with the log-ins below): the API keys' other cases are in
  // dashboard-api-keys.test.ts, with an account of its own.
  it('creates an API key shown once after the password, lists it by prefix with its access and expiry, and revokes it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click()
    await page.getByRole('heading', { name: 'API keys' }).waitFor()
    await waitForText('.card', 'No API keys yet.')
    // Full access and no expiry unless chosen, as keys were before they had either.
    expect(await page.getByLabel('Full access').isChecked()).toBe(true)
    expect(await page.getByLabel('Expires').inputValue()).toBe('never')
    // Two-factor authentication is off: no code is asked for.
    expect(await page.getByLabel('Authentication or recovery code').count()).toBe(0)
    await page.getByLabel('Name').fill('deploy script')
    const passwordField = page.getByLabel('Password', { exact: true })
    expect(await passwordField.getAttribute('autocomplete')).toBe('current-password')
    await passwordField.fill(password)
    await page.getByRole('button', { name: 'Create key' }).click()
    const key = await page.getByLabel('API key', { exact: true }).inputValue()
    // Focus moves to the new key's section, so screen readers announce it.
    await page.waitForFunction(() => document.activeElement?.textContent === 'Your new API key “deploy script”', undefined, { timeout: 5_000 })
    expect((await fetch(`${origin}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
    await waitForText('#new-api-key-hint', 'Full access; never expires.')
    // The form is done: the password goes with the name.
    expect(await passwordField.inputValue()).toBe('')
    expect(await page.getByLabel('Name').inputValue()).toBe('')

    const row = page.locator('.table tbody tr').filter({ hasText: 'deploy script' })
    const prefix = (await row.locator('td.code').textContent())?.replace('…', '') ?? ''
    expect(prefix.length).toBeGreaterThan(3)
    expect(key.startsWith(prefix)).toBe(true)
    expect(await row.textContent()).not.toContain(key)
    expect(await row.locator('td').nth(1).textContent()).toBe('Full access')
    expect(await row.locator('td').nth(2).textContent()).toBe('Never')
    await expectNoAccessibilityViolations('API keys')
    await expectNoSidewaysScrollingOnPhone('API keys')
    await saveScreenshot(page, 'api-keys')

    await page.getByRole('button', { name: 'I have copied it' }).click()
    // The button went with the key: the keyboard goes on to the list, not to the page's start.
    await page.waitForFunction(() => document.activeElement?.id === 'keys-heading', undefined, { timeout: 5_000 })
    await row.getByRole('button', { name: 'Revoke deploy script' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click()
    await waitForText('.card', 'No API keys yet.')
    expect((await fetch(`${origin}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401)
  })

  it('changes the password on the Account page, showing a wrong current password, and a new one that is the current one, beside their fields', async () => {
    await logInElsewhere()
    await page.getByRole('link', { name: 'Account', exact: true }).click()
    await page.getByRole('heading', { name: 'Change your password' }).waitFor()
    await waitForText('.sessions tbody', 'Firefox on Windows')
    await page.getByLabel('Current password').fill('not the password')
    await page.getByLabel('New password').fill('a brand new passphrase')
    await page.getByRole('button', { name: 'Change password' }).click()
    await waitForText('#current-password-error', 'is not your current password')
    await page.getByLabel('Current password').fill(password)
    await page.getByLabel('New password').fill(password)
    await page.getByRole('button', { name: 'Change password' }).click()
    await waitForText('#new-password-error', 'is your current password: choose another one')
    expect(await page.locator('#current-password-error').count()).toBe(0)
    await page.getByLabel('New password').fill('a brand new passphrase')
    await page.getByRole('button', { name: 'Change password' }).click()
    await waitForText('.notice--success', 'Your password was changed.')
    password = 'a brand new passphrase'
    // The change ended the other session: the list no longer offers to log it out.
    await page.waitForFunction(() => document.querySelectorAll('.sessions tbody tr').length === 1)
    expect(await page.locator('.sessions tbody tr[data-current="true"]').count()).toBe(1)
    await expectNoAccessibilityViolations('account')
  })

  it('lists the sessions on the Account page and logs out one of them, or everywhere else, keeping this session', async () => {
    const firstCookie = await logInElsewhere()
    await page.reload()
    const sessionRows = page.locator('.sessions tbody tr')
    await page.locator('.sessions tbody tr[data-current="true"]').waitFor()
    await waitForText('.sessions tbody', 'Firefox on Windows')
    await waitForText('.sessions tbody', '198.51.100.60')
    expect(await page.locator('.sessions tbody tr[data-current="true"]').textContent()).toContain('This browser')
    await expectNoAccessibilityViolations('sessions')
    await expectNoSidewaysScrollingOnPhone('account')
    await saveScreenshot(page, 'account-sessions')
    const countBefore = await sessionRows.count()
    await sessionRows.filter({ hasText: 'Firefox on Windows' }).first().getByRole('button', { name: /^Log out Firefox on Windows/ }).click()
    await waitForText('.notice--success', 'Logged out Firefox on Windows.')
    expect((await fetch(`${origin}/api/v1/me`, { headers: { cookie: firstCookie } })).status).toBe(401)
    await page.waitForFunction((count) => document.querySelectorAll('.sessions tbody tr').length === count, countBefore - 1)

    const otherCookie = await logInElsewhere()
    await page.getByRole('button', { name: 'Log out everywhere else' }).click()
    await waitForText('.notice--success', 'Logged out of 1 other session.')
    expect((await fetch(`${origin}/api/v1/me`, { headers: { cookie: otherCookie } })).status).toBe(401)
    await page.reload()
    await page.getByRole('heading', { name: 'Change your password' }).waitFor()
  })

  it('logs out, and logs back in', async () => {
    // The sessions list is still loading when the user logs out: its late 401 says nothing new,
    // and must not turn the chosen log-out into "your session has ended".
    const sessionsList = await holdRequests('**/api/v1/sessions', 'GET')
    const listRequest = page.waitForRequest((request) => request.method() === 'GET' && new URL(request.url()).pathname === '/api/v1/sessions')
    await page.getByRole('button', { name: 'Log out everywhere else' }).click()
    await listRequest
    await page.getByRole('button', { name: 'Log out', exact: true }).click()
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    const lateAnswer = page.waitForResponse((response) => response.request().method() === 'GET' && new URL(response.url()).pathname === '/api/v1/sessions')
    sessionsList.release()
    expect((await lateAnswer).status()).toBe(401)
    await page.unroute('**/api/v1/sessions')
    await settle()
    expect(await page.locator('.notice').count()).toBe(0)
    await page.goto(`${origin}/dashboard/sites/${siteId}`)
    await page.getByRole('heading', { name: 'Log in' }).waitFor()

    await page.getByLabel('E-mail address').fill(email)
    await page.getByLabel('Password').fill('not the password')
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await waitForText('.notice--error', 'wrong')
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    // The deep link survives the log-in.
    await page.getByRole('heading', { name: 'Example shop' }).waitFor()
    await page.getByRole('link', { name: 'Sites', exact: true }).first().click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    await expectNoAccessibilityViolations('sites')
    await saveScreenshot(page, 'sites')
  })

  it('keeps a failed log-out from looking like one, and says so when the session ends while a page is open', async () => {
    // The service cannot end the session: the page must not pretend it did.
    await page.route('**/api/v1/sessions', (route) =>
      route.request().method() === 'DELETE'
        ? route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { code: 'service_unavailable', message: 'A dependency of the service is unavailable; retry later.', requestId: 'r-1' } }) })
        : route.continue(),
    )
    await page.getByRole('button', { name: 'Log out', exact: true }).click()
    await waitForText('.notice--error', 'Logging out failed, so you are still logged in')
    await page.unroute('**/api/v1/sessions')
    pageErrors.splice(0, pageErrors.length, ...pageErrors.filter((error) => !/status of 503/.test(error)))
    await page.reload()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    // The page's own requests are answered before the session ends: one still on its way would
    // meet the ended session first and show the log-in form before the click below.
    await page.getByRole('link', { name: 'Example shop' }).waitFor()

    // The session ends elsewhere (expired, revoked): the next request says why on the log-in form.
    await browser.context.clearCookies()
    await page.getByRole('link', { name: 'API keys' }).click()
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await waitForText('.notice--info', 'Your session has ended')
    await page.getByLabel('E-mail address').fill(email)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByRole('heading', { name: 'API keys' }).waitFor()
    await page.getByRole('link', { name: 'Sites', exact: true }).first().click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
  })

  it("shows a surge of the site's challenges on its analytics page", async () => {
    await page.getByRole('link', { name: 'Example shop' }).click()
    await page.getByRole('link', { name: 'Settings' }).click()
    await page.getByLabel('Surge threshold (challenges per minute)').fill('2')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await waitForText('.notice--success', 'Settings saved.')
    for (let visitor = 0; visitor < 4; visitor += 1) {
      const response = await fetch(`${origin}/api/v1/challenge`, { method: 'POST', headers: { ...browserHeaders('https://shop.example'), 'x-site-key': siteKey } })
      expect(response.status).toBe(200)
    }
    await page.getByRole('link', { name: 'Analytics' }).click()
    // The fleet's count reaches the store within a second or so: refresh until the surge shows.
    const surge = page.locator('.notice--warning', { hasText: 'In a surge since' })
    for (let attempt = 0; attempt < 40 && (await surge.count()) === 0; attempt += 1) {
      await page.waitForTimeout(250)
      await page.getByRole('button', { name: 'Refresh' }).click()
    }
    expect(await surge.textContent()).toMatch(/^In a surge since .+\. \d+ challenges in the last minute \(surge threshold 2\): every challenge is [1-4] bits? harder\.$/)
    // The numbers load apart from the surge: while they do, they are dimmed as busy (a contrast
    // the accessibility check would rightly refuse), so it waits for them.
    await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null)
    await expectNoAccessibilityViolations('analytics in a surge')
    await saveScreenshot(page, 'analytics-surge')
    await page.getByRole('link', { name: 'Sites', exact: true }).first().click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
  })

  it("lists the account's activity: who changed what, from where, filtered by site and by action, older events appended", async () => {
    // A script changes a setting with an API key: the log names the key and the account it belongs to.
    // Made from another address, whose budget of password attempts is its own (this browser's is
    // spent on its log-ins and confirmations).
    const cookie = (await browser.context.cookies(origin)).map(({ name, value }) => `${name}=${value}`).join('; ')
    const created = await service.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { host: new URL(origin).host, origin, cookie },
      payload: { name: 'deploy', password },
      remoteAddress: '198.51.100.61',
    })
    expect(created.statusCode).toBe(201)
    const apiKey = created.json<{ key: string; prefix: string }>()
    const scripted = await fetch(`${origin}/api/v1/sites/${siteId}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${apiKey.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ settings: { maxStepUps: 3 } }),
    })
    expect(scripted.status).toBe(200)

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Activity' }).click()
    await page.getByRole('heading', { name: 'Activity', exact: true }).waitFor()
    await page.waitForFunction(() => document.title === 'Activity · Tollgate')
    const rows = page.locator('.activity tbody tr')
    await rows.first().waitFor()
    /** The rows whose "What" is exactly `what`, and their "Who" and "From". */
    const rowsSaying = (what: string) => rows.filter({ has: page.locator('.activity__what').getByText(what, { exact: true }) })
    const whoOf = async (what: string) => (await rowsSaying(what).locator('.activity__who').allInnerTexts()).map((text) => text.trim())
    const you = `${email} (dashboard)`

    expect(await whoOf('Signed up')).toEqual(['Unknown (not logged in)'])
    expect(await whoOf('Created site Example shop for shop.example, www.shop.example')).toEqual([you])
    // A settings change with its values before and after, by the settings page's names of the fields.
    expect(await whoOf('Changed site Example shop: surge threshold 0 → 2 challenges per minute')).toEqual([you])
    expect(await whoOf('Changed site Example shop: challenge lifetime 120 → 600 seconds')).toEqual([you])
    expect(await whoOf('Changed site Example shop: maximum step-ups 2 → 3')).toEqual([`${email} via API key deploy (${apiKey.prefix}…)`])
    // The webhook URL as its origin and a digest of the rest: a chat service's URL is its secret.
    const webhookRemoved = new RegExp(`^Changed site Example shop: webhook URL ${new URL(receiver.url).origin.replaceAll('.', '\\.')}/… \\([0-9a-f]{8}\\) → none; removed the webhook secret$`)
    expect(await rows.filter({ has: page.locator('.activity__what').getByText(webhookRemoved) }).locator('.activity__who').allInnerTexts()).toEqual([you])
    expect(await rows.locator('.activity__what').getByText(/^(Created|Revoked) API key deploy script \(tgak_[\w-]{7}…\)$/).count()).toBe(2)
    // The log-ins: this browser's, and the other device's from its own address and browser.
    const logIns = await whoOf('Logged in')
    expect(logIns.length).toBeGreaterThan(1)
    expect(logIns.every((who) => who === you)).toBe(true)
    expect(await rowsSaying('Logged in').filter({ hasText: '198.51.100.60' }).first().locator('.activity__from').innerText()).toContain('Firefox on Windows')
    expect(await whoOf('Failed log-in (wrong password)')).toEqual(['Unknown (not logged in)'])
    // Each time is in a <time> with its ISO form, for a machine or a copy.
    expect(await rows.first().locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/)
    const allCount = await rows.count()
    await waitForText('.activity__count', `Showing all ${allCount} events.`)
    expect(await page.getByRole('status').filter({ hasText: `Showing all ${allCount} events.` }).count()).toBe(1)
    await expectNoAccessibilityViolations('activity')
    await expectNoSidewaysScrollingOnPhone('activity')
    await saveScreenshot(page, 'activity')

    // Filtered by the site: its events only, fewer; then by an action of it.
    await page.getByLabel('Site').selectOption({ label: 'Example shop' })
    await page.waitForFunction(
      ({ id, count }) => {
        const shown = [...document.querySelectorAll('.activity tbody tr')]
        return shown.length > 0 && shown.length < count && shown.every((row) => row.getAttribute('data-site') === id)
      },
      { id: siteId, count: allCount },
    )
    expect(await rowsSaying('Logged in').count()).toBe(0)
    await page.getByLabel('Action').selectOption('site.updated')
    await page.waitForFunction(() => [...document.querySelectorAll('.activity tbody tr')].every((row) => row.getAttribute('data-action') === 'site.updated'))
    const updates = await rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-id')))
    await waitForText('.activity__count', `Showing all ${updates.length} events.`)
    expect(updates.length).toBeGreaterThan(5)
    // Both filters are in the address, and a reload keeps them.
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ site: siteId, action: 'site.updated' })
    await page.reload()
    await rows.first().waitFor()
    expect(await page.getByLabel('Site').inputValue()).toBe(siteId)
    expect(await page.getByLabel('Action').inputValue()).toBe('site.updated')
    expect(await rows.count()).toBe(updates.length)

    // Pages of three: "Show older events" appends the next page below the ones shown, and says how many are shown.
    await page.route('**/api/v1/audit-log?**', (route) => {
      const url = new URL(route.request().url())
      url.searchParams.set('limit', '3')
      return route.continue({ url: url.toString() })
    })
    await page.getByRole('button', { name: 'Refresh' }).click()
    await page.waitForFunction(() => document.querySelectorAll('.activity tbody tr').length === 3)
    await waitForText('.activity__count', 'Showing the newest 3 events.')
    const older = page.getByRole('button', { name: 'Show older events' })
    for (let shown = 3; shown < updates.length; shown += 3) {
      await older.click()
      await page.waitForFunction((count) => document.querySelectorAll('.activity tbody tr').length === count, Math.min(shown + 3, updates.length))
    }
    expect(await rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-id')))).toEqual(updates)
    await waitForText('.activity__count', `Showing all ${updates.length} events.`)
    // The button goes with the last page: the keyboard's place is the list's end.
    await page.getByText('No older events.').waitFor()
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('No older events.')
    await page.unroute('**/api/v1/audit-log?**')

    // A site's page leads to its activity.
    await page.getByLabel('Action').selectOption('')
    await page.getByLabel('Site').selectOption('')
    await page.waitForFunction((count) => document.querySelectorAll('.activity tbody tr').length === count, allCount)
    expect(new URL(page.url()).search).toBe('')
    await page.getByRole('link', { name: 'Sites', exact: true }).first().click()
    await page.getByRole('link', { name: 'Example shop' }).click()
    await page.getByRole('link', { name: 'Activity of this site' }).click()
    await page.getByRole('heading', { name: 'Activity', exact: true }).waitFor()
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ site: siteId })
    expect(await page.getByLabel('Site').inputValue()).toBe(siteId)
    await page.waitForFunction((id) => {
      const shown = [...document.querySelectorAll('.activity tbody tr')]
      return shown.length > 0 && shown.every((row) => row.getAttribute('data-site') === id)
    }, siteId)
    await page.getByRole('link', { name: 'Sites', exact: true }).first().click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
  })

  it("deletes the site after a confirmation that asks for the site's name", async () => {
    await page.getByRole('link', { name: 'Example shop' }).click()
    await page.getByRole('link', { name: 'Keys and snippet' }).click()
    await page.getByRole('button', { name: 'Delete site' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete Example shop?' })
    await dialog.getByText('No one else is a member of it.').waitFor()
    const confirm = dialog.getByRole('button', { name: 'Delete site' })
    expect(await confirm.isDisabled()).toBe(true)
    await dialog.getByLabel("Type the site's name to confirm").fill('Example sho')
    expect(await confirm.isDisabled()).toBe(true)
    await dialog.getByLabel("Type the site's name to confirm").fill('Example shop')
    await confirm.click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    await waitForText('.empty', 'No sites yet')
  })

  it("keeps a deleted site's events, under the name they recorded", async () => {
    // An old bookmark's action, which this dashboard does not know, is dropped from the address.
    await page.goto(`${origin}/dashboard/activity?site=${siteId}&action=site.transferred`)
    await page.getByRole('heading', { name: 'Activity', exact: true }).waitFor()
    await waitForText('.activity tbody tr:first-child .activity__what', 'Deleted site Example shop')
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ site: siteId })
    expect(await page.getByLabel('Action').inputValue()).toBe('')
    await page.waitForFunction(() => document.querySelector('#activity-site option:checked')?.textContent === 'Example shop (deleted)')
    await page.getByRole('link', { name: 'Sites', exact: true }).first().click()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
  })

  it('deletes the account after a confirmation with the password, and says so on the log-in form', async () => {
    // Still loading when the account goes: its late 401 must not replace what the page says.
    const sessionsList = await holdRequests('**/api/v1/sessions', 'GET')
    const listRequest = page.waitForRequest((request) => request.method() === 'GET' && new URL(request.url()).pathname === '/api/v1/sessions')
    await page.getByRole('link', { name: 'Account', exact: true }).click()
    await listRequest
    await page.getByRole('button', { name: 'Delete account' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete your account?' })
    await dialog.waitFor()
    await dialog.getByLabel('Password').fill('not the password')
    await dialog.getByRole('button', { name: 'Delete account' }).click()
    await waitForText('#deletion-password-error', 'is not your current password')
    await expectNoAccessibilityViolations('account deletion')
    // While a deletion is under way it cannot be cancelled (it would go on behind a closed dialog).
    await page.route('**/api/v1/me', async (route) => {
      if (route.request().method() !== 'DELETE') return route.fallback()
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      await route.fallback()
    })
    await dialog.getByRole('button', { name: 'Delete account' }).click()
    await dialog.getByRole('button', { name: 'Working…' }).waitFor()
    expect(await dialog.getByRole('button', { name: 'Cancel' }).isDisabled()).toBe(true)
    await page.keyboard.press('Escape')
    expect(await dialog.isVisible()).toBe(true)
    await waitForText('#deletion-password-error', 'is not your current password')
    await page.unroute('**/api/v1/me')
    // Cancelled and opened again, the dialog starts clean: no old error, no password.
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('button', { name: 'Delete account' }).click()
    await dialog.waitFor()
    expect(await dialog.locator('#deletion-password-error').count()).toBe(0)
    expect(await dialog.getByLabel('Password').inputValue()).toBe('')
    await dialog.getByLabel('Password').fill(password)
    // Enter in the password field confirms, as the button does; pressed again while the deletion
    // runs, it sends nothing more.
    const deletions: string[] = []
    page.on('request', (request) => {
      if (request.method() === 'DELETE' && new URL(request.url()).pathname === '/api/v1/me') deletions.push(request.url())
    })
    const deletion = await holdRequests('**/api/v1/me', 'DELETE')
    await dialog.getByLabel('Password').press('Enter')
    await dialog.getByRole('button', { name: 'Working…' }).waitFor()
    await dialog.getByLabel('Password').press('Enter')
    deletion.release()
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await page.unroute('**/api/v1/me')
    const lateAnswer = page.waitForResponse((response) => response.request().method() === 'GET' && new URL(response.url()).pathname === '/api/v1/sessions')
    sessionsList.release()
    expect((await lateAnswer).status()).toBe(401)
    await page.unroute('**/api/v1/sessions')
    await settle()
    expect(deletions).toHaveLength(1)
    expect(await page.locator('.notice').allTextContents()).toEqual(['Your account and everything of it were deleted.'])
    // From another address, whose budget of password attempts is its own: this browser's (10 in 10
    // minutes) counts its log-ins and wrong passwords, and is kept clear of the test's end.
    const logIn = await service.app.inject({ method: 'POST', url: '/api/v1/sessions', headers: { host: new URL(origin).host, origin }, payload: { email, password }, remoteAddress: '198.51.100.62' })
    expect(logIn.statusCode).toBe(401)
  })

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(pageErrors).toEqual([])
  })
})
