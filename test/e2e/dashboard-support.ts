import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type BrowserContext, type Page, type Route } from 'playwright-core'
import { expect } from 'vitest'
import { asBrowser, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { isCi } from '../helpers/services.js'
import { buildTestApp, type TestApp, type TestAppOptions } from '../helpers/test-app.js'
import { countLeadingZeroBits } from '../../src/domain/proof-of-work/count-leading-zero-bits.js'

export const CHROMIUM_PATH = '/usr/bin/chromium'
export const screenshotDirectory = fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url))

/**
 * Whether the browser suites can run. Without Debian's chromium they are skipped on a laptop,
 * saying so loudly; under CI a missing browser fails the run.
 */
export function hasChromium(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true
  const message = `Chromium is not installed at ${CHROMIUM_PATH} (apt-get install -y chromium)`
  if (isCi) throw new Error(`${message}; CI must run the dashboard end-to-end tests`)
  console.warn(`\n!!! SKIPPING THE DASHBOARD END-TO-END TESTS: ${message} !!!\n`)
  return false
}

const dashboardSources = fileURLToPath(new URL('../../dashboard/', import.meta.url))
const builtIndex = fileURLToPath(new URL('../../dist/dashboard/index.html', import.meta.url))
const buildLock = fileURLToPath(new URL('../../dist/.dashboard-build.lock', import.meta.url))

async function newestModification(directory: string): Promise<number> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true })
  const times = await Promise.all(
    entries.filter((entry) => entry.isFile()).map(async (entry) => (await stat(join(entry.parentPath, entry.name))).mtimeMs),
  )
  return Math.max(0, ...times)
}

async function isBuildCurrent(): Promise<boolean> {
  try {
    return (await stat(builtIndex)).mtimeMs >= (await newestModification(dashboardSources))
  } catch {
    return false
  }
}

/**
 * Builds dashboard/ into dist/dashboard/, where the service serves it from, unless the build is
 * newer than every source. Test files run in parallel processes: a lock directory (mkdir is
 * atomic) keeps one from emptying dist/dashboard/ while another one's browser loads from it.
 */
export async function buildDashboard(): Promise<void> {
  await mkdir(dirname(buildLock), { recursive: true })
  const deadline = Date.now() + 120_000
  for (;;) {
    try {
      await mkdir(buildLock)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
  try {
    if (await isBuildCurrent()) return
    const { build } = await import('vite')
    // Vitest runs with NODE_ENV=test, which Vite keeps for the build: Preact's development code
    // would be bundled (about 9 kB more gzipped) instead of what `npm run build` serves.
    const testEnvironment = process.env.NODE_ENV
    process.env.NODE_ENV = 'production'
    try {
      await build({ configFile: join(dashboardSources, 'vite.config.ts'), logLevel: 'warn', mode: 'production' })
    } finally {
      if (testEnvironment === undefined) delete process.env.NODE_ENV
      else process.env.NODE_ENV = testEnvironment
    }
  } finally {
    await rm(buildLock, { recursive: true, force: true })
  }
}

export interface Browser {
  context: BrowserContext
  close(): Promise<void>
}

/** Headless Debian Chromium with a fresh profile, allowed to use the clipboard (copy buttons). */
export async function launchBrowser(origin: string): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'tollgate-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  // Fail a step within seconds rather than at the test's timeout, with the selector in the message;
  // 20 of them, as a loaded CI host has taken more than 10 for a password change's answer.
  context.setDefaultTimeout(20_000)
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
  return {
    context,
    async close() {
      await context.close()
      await rm(profile, { recursive: true, force: true })
    },
  }
}

export interface OpenDashboard {
  service: TestApp
  /** The service's own origin, http://127.0.0.1:<port>. */
  origin: string
  browser: Browser
  page: Page
  /** Errors the page reported so far (watchPageErrors). */
  pageErrors: string[]
  close(): Promise<void>
}

/** The built dashboard, served by a test app on a real port, and a Chromium page watching it. */
export async function openDashboard(options: TestAppOptions = {}): Promise<OpenDashboard> {
  await buildDashboard()
  const service = await buildTestApp(options)
  await service.app.listen({ port: 0, host: '127.0.0.1' })
  const origin = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
  const browser = await launchBrowser(origin)
  const page = await browser.context.newPage()
  return {
    service,
    origin,
    browser,
    page,
    pageErrors: watchPageErrors(page),
    async close() {
      await browser.close()
      await service.close()
    },
  }
}

/** Signs up through the dashboard's own form, at `origin`, and waits for the Sites page it lands on. */
export async function signUpInDashboard(page: Page, origin: string, account: { email: string; password: string }): Promise<void> {
  await page.goto(`${origin}/dashboard/signup`)
  await page.getByLabel('E-mail address').fill(account.email)
  await page.getByLabel('Password').fill(account.password)
  await page.getByRole('button', { name: 'Create account' }).click()
  await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
}

/** The dashboard in Chromium, logged in to a new account (its session cookie from the API's log-in). */
export async function openLoggedInDashboard(): Promise<{ dashboard: OpenDashboard; account: TestAccount }> {
  const dashboard = await openDashboard()
  return { dashboard, account: await logInNewAccount(dashboard) }
}

/**
 * A new account of the dashboard's service, logged in in its browser (its session cookie from the
 * API's log-in, in place of any before): for suites that share one service, whose building on a
 * fresh database is most of openLoggedInDashboard's time.
 */
export async function logInNewAccount(dashboard: OpenDashboard): Promise<TestAccount> {
  const account = await createTestAccount(dashboard.service.app)
  await addSessionCookie(dashboard.page.context(), account, dashboard.origin)
  return account
}

/** Logs a browser in to `account` by its session cookie (from the API's log-in) for `origin`. */
export async function addSessionCookie(context: BrowserContext, account: Pick<TestAccount, 'cookie'>, origin: string): Promise<void> {
  const [name = '', value = ''] = account.cookie.split(/=(.*)/s)
  await context.addCookies([{ name, value, url: origin }])
}

/** The logged-in dashboard of a new account that has one site, made through the API with `body`. */
export async function openLoggedInDashboardWithSite(body: object): Promise<{ dashboard: OpenDashboard; account: TestAccount; site: CreatedSite }> {
  const { dashboard, account } = await openLoggedInDashboard()
  return { dashboard, account, site: await createTestSite(dashboard.service.app, account, body) }
}

export interface ListedApiKey {
  name: string
  prefix: string
  access: 'full' | 'read'
  siteIds: string[] | null
  expiresAt: string | null
}

/** The account's API keys as the API lists them to its session. */
export async function listApiKeys(service: TestApp, account: Pick<TestAccount, 'cookie'>): Promise<ListedApiKey[]> {
  const response = await service.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: asBrowser(account) })
  return response.json<{ items: ListedApiKey[] }>().items
}

export async function prepareScreenshotDirectory(): Promise<void> {
  await mkdir(screenshotDirectory, { recursive: true })
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders
  body: string
}

export interface WebhookReceiver {
  url: string
  received: ReceivedWebhook[]
  close(): Promise<void>
}

/** A site owner's webhook endpoint on loopback: records each request and answers 200. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') })
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks/tollgate`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** The DESIGN section 4 proof of work: SHA-256(challenge + nonce) with `difficulty` leading zero bits. */
export function solveProofOfWork(challenge: string, difficulty: number): string {
  for (let nonce = 0; nonce < Number.MAX_SAFE_INTEGER; nonce += 1) {
    const digest = createHash('sha256').update(challenge + String(nonce)).digest()
    if (countLeadingZeroBits(digest) >= difficulty) return String(nonce)
  }
  throw new Error('no nonce found')
}

interface ChallengeAnswer {
  challengeId: string
  challenge: string
  difficulty: number
}

/**
 * One verification through the public API, as a script would make it (no browser signals):
 * what the log records for it is up to the risk model, which is exactly what the chart shows.
 */
export async function verifyOnce(
  origin: string,
  siteKey: string,
  headers: Record<string, string> = {},
  submission: { pageAction?: string } = {},
): Promise<{ action: string; riskScore: number; requestId: string }> {
  const challengeResponse = await fetch(`${origin}/api/v1/challenge`, { method: 'POST', headers: { ...headers, 'x-site-key': siteKey } })
  if (!challengeResponse.ok) throw new Error(`challenge: HTTP ${challengeResponse.status} ${await challengeResponse.text()}`)
  const challenge = (await challengeResponse.json()) as ChallengeAnswer
  const started = performance.now()
  const nonce = solveProofOfWork(challenge.challenge, challenge.difficulty)
  const verifyResponse = await fetch(`${origin}/api/v1/verify`, {
    method: 'POST',
    headers: { ...headers, 'x-site-key': siteKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      challengeId: challenge.challengeId,
      nonce,
      solveTimeMs: Math.max(1, Math.round(performance.now() - started)),
      fingerprint: { canvas: 'e2e-canvas', webgl: 'e2e-webgl' },
      behaviorData: { mouseMovements: 12, keystrokes: 4 },
      ...submission,
    }),
  })
  if (!verifyResponse.ok) throw new Error(`verify: HTTP ${verifyResponse.status} ${await verifyResponse.text()}`)
  return { ...((await verifyResponse.json()) as { action: string; riskScore: number }), requestId: verifyResponse.headers.get('x-request-id') ?? '' }
}

/** Saves a full-page screenshot of the current screen for the README and for review. */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(screenshotDirectory, `${name}.png`), fullPage: true })
}

/** Errors a strict CSP or a broken bundle would cause; failed API answers (4xx) are expected and not counted. */
export function watchPageErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) {
      errors.push(`console: ${message.text()}`)
    }
  })
  return errors
}

export interface HeldRequests {
  /** How many of the held requests the page has sent so far. */
  count(): number
  /** Lets them (and those that follow) through, and stops holding and counting. */
  release(): Promise<void>
}

/**
 * Holds the page's `method` requests to `url` until release(), counting them: a request is then
 * still on its way while the test presses keys, as on a slow connection.
 */
export async function holdRequests(page: Page, url: string, method: string): Promise<HeldRequests> {
  let sent = 0
  let letThrough = () => {}
  const released = new Promise<void>((resolve) => {
    letThrough = resolve
  })
  const hold = async (route: Route) => {
    if (route.request().method() === method) {
      sent += 1
      await released
    }
    await route.fallback()
  }
  await page.route(url, hold)
  return {
    count: () => sent,
    async release() {
      letThrough()
      await page.unroute(url, hold)
    },
  }
}

const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export interface AccessibilityViolation {
  id: string
  impact: string | null
  help: string
  targets: string[]
}

/**
 * Runs axe-core (WCAG 2 A and AA rules: labels, contrast, names, landmarks) on the current
 * screen. It is evaluated through the DevTools protocol, which the page's CSP does not govern.
 */
export async function findAccessibilityViolations(page: Page): Promise<AccessibilityViolation[]> {
  await page.evaluate(axeSource)
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] }> } }).axe
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(' ')),
    }))
  })
}

/**
 * axe-core's landmark rules (best practice, outside the WCAG tags above): landmarks a screen
 * reader lists by name, such as a section and the scrolling box of its table, named alike.
 */
export async function findLandmarkViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource)
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }).axe
    const result = await axe.run(document, { runOnly: { type: 'rule', values: ['landmark-unique', 'landmark-no-duplicate-main', 'landmark-one-main'] } })
    return result.violations.map((violation) => `${violation.id} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)
  })
}

/** Fails the test with axe-core's findings on the current screen, named `screen` in the message. */
export async function expectNoAccessibilityViolations(page: Page, screen: string): Promise<void> {
  const violations = await findAccessibilityViolations(page)
  const described = violations.map((violation) => `${violation.id} (${violation.impact ?? '?'}): ${violation.help} at ${violation.targets.join(', ')}`)
  expect(described, `accessibility problems on the ${screen} screen`).toEqual([])
}

/** The id of the element that has the keyboard focus. */
export function focusedId(page: Page): Promise<string | undefined> {
  return page.evaluate(() => document.activeElement?.id)
}

/** A submission with a nonce that does not solve its challenge: the log records it as rejected. */
export async function submitWrongNonce(origin: string, siteKey: string): Promise<number> {
  const challenge = (await (await fetch(`${origin}/api/v1/challenge`, { method: 'POST', headers: { 'x-site-key': siteKey } })).json()) as ChallengeAnswer
  let nonce = 0
  while (countLeadingZeroBits(createHash('sha256').update(challenge.challenge + String(nonce)).digest()) >= challenge.difficulty) nonce += 1
  const response = await fetch(`${origin}/api/v1/verify`, {
    method: 'POST',
    headers: { 'x-site-key': siteKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      challengeId: challenge.challengeId,
      nonce: String(nonce),
      solveTimeMs: 50,
      fingerprint: { canvas: 'e2e-canvas', webgl: 'e2e-webgl' },
      behaviorData: { mouseMovements: 0, keystrokes: 0 },
    }),
  })
  return response.status
}

/** Headers of a visitor's browser on the site's own domain, for verifications the risk model lets through. */
export function browserHeaders(siteOrigin: string): Record<string, string> {
  return {
    origin: siteOrigin,
    'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36',
    'accept-language': 'en-US,en;q=0.9',
    'sec-fetch-site': 'cross-site',
  }
}
