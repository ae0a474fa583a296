/// <reference lib="dom" />
import { existsSync } from 'node:fs'
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core'
import { buildSdk } from '../../scripts/build-sdk.js'
import type { SiteSettings } from '../../src/domain/sites/site.js'
import { DEMO_SITE_ID, type DemoSite } from '../../src/plugins/demo-site.js'
import { afterAll, beforeAll } from 'vitest'
import { isCi } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

// The SDK's public types, whose global declaration types `window.Tollgate` in page code.
export type { TollgateApi } from '../../sdk/tollgate.js'

export const CHROMIUM_PATH = '/usr/bin/chromium'

/**
 * Whether the SDK's browser suites can run. Without Debian's chromium they are skipped on a
 * laptop, saying so loudly; under CI a missing browser fails the run.
 */
export function hasChromium(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true
  const message = `Chromium is not installed at ${CHROMIUM_PATH} (apt-get install -y chromium)`
  if (isCi) throw new Error(`${message}; CI must run the SDK end-to-end tests`)
  console.warn(`\n!!! SKIPPING THE SDK END-TO-END TESTS: ${message} !!!\n`)
  return false
}

export interface SdkService {
  service: TestApp
  /** e.g. http://127.0.0.1:43125 */
  origin: string
  demoSite: DemoSite
  /** Changes the demo site's settings (merged) and drops the cached copy. */
  setDemoSettings(settings: Partial<SiteSettings>): Promise<void>
  /** Redeems a token the way a site's backend does. */
  siteverify(token: string): Promise<{ success: boolean; 'error-codes': string[]; action?: string; riskScore?: number; metadata?: { ephemeral_id: string | null } }>
  close(): Promise<void>
}

/**
 * Builds the SDK into dist/sdk (atomic writes, so parallel suites may do it too) and starts the
 * whole service as in development: it seeds the demo site that /demo uses. It listens on a free
 * port of 127.0.0.1 because a real browser must reach it.
 */
export async function startSdkService(): Promise<SdkService> {
  await buildSdk()
  const service = await buildTestApp({ env: { NODE_ENV: 'development' } })
  const { app } = service
  const demoSite = app.demoSite
  if (demoSite === undefined) throw new Error('the development demo site was not seeded')
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  // The test browser is automated and headless: the risk model rightly scores it high. These
  // tests are about the SDK's flow, so the demo site tolerates it unless a test says otherwise.
  await app.sites.update(DEMO_SITE_ID, { settings: { challengeThreshold: 90, blockThreshold: 100 } })
  await app.siteCache.invalidate({ id: DEMO_SITE_ID })
  return {
    service,
    origin,
    demoSite,
    async setDemoSettings(settings) {
      await app.sites.update(DEMO_SITE_ID, { settings })
      await app.siteCache.invalidate({ id: DEMO_SITE_ID })
    },
    async siteverify(token) {
      const response = await app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: demoSite.secretKey, response: token } })
      return response.json()
    },
    close: () => service.close(),
  }
}

export interface TestBrowser {
  browser: Browser
  /** A page in a fresh context; `options` (a `locale`, say) go to the context. */
  newPage(options?: BrowserContextOptions): Promise<{ page: Page; context: BrowserContext; events: PageEvents }>
  close(): Promise<void>
}

export interface PageEvents {
  /** Console errors and CSP violation reports seen by the page. */
  errors: string[]
  /** Every answer of the public API: path, status and JSON body. */
  api: { path: string; status: number; body: Record<string, unknown> }[]
}

export interface LaunchOptions {
  /** Keeps the back/forward cache on, as in a person's browser (Playwright turns it off by default). */
  keepsPagesInBackForwardCache?: true
}

/**
 * Headless Debian Chromium with a fresh profile. It drops the automation switch, the
 * navigator.webdriver flag (AutomationControlled) and the "HeadlessChrome" user agent: not to
 * hide from the risk model (the demo site's thresholds are set for that) but so that the flow
 * under test is the one a person's browser goes through; the risk model's own view of automated
 * browsers is measured by `npm run eval:detection`.
 */
export async function launchBrowser(options: LaunchOptions = {}): Promise<TestBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    ignoreDefaultArgs: ['--enable-automation', ...(options.keepsPagesInBackForwardCache === true ? ['--disable-back-forward-cache'] : [])],
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-blink-features=AutomationControlled',
    ],
  })
  const userAgent = `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${browser.version()} Safari/537.36`
  const contexts: BrowserContext[] = []
  return {
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext({ userAgent, viewport: { width: 1024, height: 768 }, ...options })
      contexts.push(context)
      const page = await context.newPage()
      const events: PageEvents = { errors: [], api: [] }
      page.on('console', (message) => {
        if (message.type() === 'error') events.errors.push(message.text())
      })
      page.on('pageerror', (error) => events.errors.push(error.message))
      page.on('response', (response) => {
        const path = new URL(response.url()).pathname
        if (!path.startsWith('/api/v1/')) return
        void response.json().then(
          (body: Record<string, unknown>) => events.api.push({ path, status: response.status(), body }),
          () => events.api.push({ path, status: response.status(), body: {} }),
        )
      })
      return { page, context, events }
    },
    async close() {
      for (const context of contexts) await context.close()
      await browser.close()
    },
  }
}

/**
 * For a describe block: starts the service and a browser before its tests and stops both after
 * them. Read `suite.sdk` and `suite.browser` inside the tests.
 */
export function serviceAndBrowser(): { readonly sdk: SdkService; readonly browser: TestBrowser } {
  let sdk: SdkService | undefined
  let browser: TestBrowser | undefined
  beforeAll(async () => {
    sdk = await startSdkService()
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await sdk?.close()
  })
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the suite has not started: use suite.sdk and suite.browser inside tests')
    return value
  }
  return {
    get sdk() { return started(sdk) },
    get browser() { return started(browser) },
  }
}

/** What a person does before submitting: moves the pointer and types the value key by key. */
export async function typeLikeAPerson(page: Page, selector: string, text: string): Promise<void> {
  const box = await page.locator(selector).boundingBox()
  if (box !== null) {
    await page.mouse.move(box.x - 40, box.y - 30, { steps: 5 })
    await page.mouse.move(box.x + box.width / 3, box.y + box.height / 2, { steps: 8 })
  }
  await page.click(selector)
  await page.keyboard.type(text, { delay: 15 })
}

/**
 * Holds the first request matching `pattern` (the server's answer, with `answered`, is fetched
 * but kept from the page) until `release()`; later requests pass. `arrived` settles when the
 * held request reached the route.
 */
export async function holdFirst(page: Page, pattern: string, answered = false): Promise<{ arrived: Promise<void>; release: () => void }> {
  let onArrival = () => {}
  const arrived = new Promise<void>((resolve) => { onArrival = resolve })
  let release = () => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  let held = false
  await page.route(pattern, async (route) => {
    if (held) return route.continue()
    held = true
    const response = answered ? await route.fetch() : undefined
    onArrival()
    await released
    // The page has usually given up on the request by now (reset() aborted it).
    await (response === undefined ? route.continue() : route.fulfill({ response })).catch(() => undefined)
  })
  return { arrived, release }
}

/** The API requests the page starts from now on. */
export function apiRequestsFrom(page: Page): string[] {
  const paths: string[] = []
  page.on('request', (request) => {
    const path = new URL(request.url()).pathname
    if (path.startsWith('/api/v1/')) paths.push(path)
  })
  return paths
}

export interface SignupRecord {
  /** The token field's value each time a submit reached the page (the SDK's re-submit). */
  submitted: string[]
  /** The codes of the tollgate:error events. */
  errors: string[]
}

/** Keeps the page on submit and records what reaches #signup-form's own listeners. */
export async function recordSignup(page: Page): Promise<void> {
  await page.evaluate(() => {
    const form = document.querySelector<HTMLFormElement>('#signup-form')
    const record = { submitted: [] as string[], errors: [] as string[] }
    Object.assign(window, { record })
    form?.addEventListener('submit', (event) => {
      event.preventDefault()
      record.submitted.push(form.querySelector<HTMLInputElement>('input[name="tollgate-token"]')?.value ?? '')
    })
    form?.addEventListener('tollgate:error', (event) => record.errors.push((event as CustomEvent<{ code: string }>).detail.code))
  })
}

export async function signupState(page: Page): Promise<SignupRecord & { token: string; status: string }> {
  return page.evaluate(() => ({
    ...(window as unknown as { record: SignupRecord }).record,
    token: document.querySelector<HTMLInputElement>('#signup-form input[name="tollgate-token"]')?.value ?? '',
    status: document.querySelector('#signup-form [data-tollgate-status]')?.textContent ?? '',
  }))
}

export async function waitForTheSubmitToEnd(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const { record } = window as unknown as { record: SignupRecord }
    return record.submitted.length > 0 || record.errors.length > 0
  }, undefined, { timeout: 25_000 })
}
