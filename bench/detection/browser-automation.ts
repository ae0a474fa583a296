import { randomInt } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Page } from 'playwright-core'

export type AutomationVariant = 'headless-default' | 'playwright-headed' | 'headless-stealth' | 'headless-stealth-patched'

/** The flags this workplace requires for Chromium (no sandbox as root, nothing fetched from the network). */
const REQUIRED_ARGS = ['--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

const LINUX_CHROME_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36'

/** Waits until the demo shows the Siteverify result page or the SDK reports that it gave up. */
export async function waitForDemoOutcome(page: Page, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const title = await page.title().catch(() => '')
    if (title.includes('result')) return
    const status = await page.locator('[data-tollgate-status]').first().textContent({ timeout: 500 }).catch(() => '')
    if (status !== null && /block|fail|could not|error|denied|try again/i.test(status)) return
    await page.waitForTimeout(250)
  }
}

/**
 * Runs in the page before its scripts (addInitScript): the patches stealth plugins apply. Also
 * used by test/e2e/sdk-automation-signals.test.ts, which checks that the SDK sees them.
 */
export function patchLikeStealthPlugins(): void {
  Object.defineProperty(Navigator.prototype, 'webdriver', { get: () => false, configurable: true })
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with its context
  const getParameter = WebGLRenderingContext.prototype.getParameter
  WebGLRenderingContext.prototype.getParameter = function (this: WebGLRenderingContext, name: number): unknown {
    if (name === 37445) return 'Intel Inc.'
    if (name === 37446) return 'Intel Iris OpenGL Engine'
    return getParameter.call(this, name) as unknown
  }
}

/**
 * An automated browser session on the demo page: Playwright drives Chromium, fills the sign-up
 * form and submits it.
 * - headless-default: Playwright's headless Chromium with its default settings;
 * - playwright-headed: a headed window under Xvfb, with pointer paths and typing at a human pace;
 * - headless-stealth (informational): headless with a regular Chrome User-Agent and the automation
 *   flag turned off (--disable-blink-features=AutomationControlled), as evasion guides suggest;
 * - headless-stealth-patched (reported apart): headless-stealth plus what stealth plugins inject by
 *   an init script: navigator.webdriver false from a replaced getter, and a GPU's WebGL vendor and
 *   renderer in place of SwiftShader's from a replaced getParameter.
 */
export async function runAutomationSession(variant: AutomationVariant, baseUrl: string, display: string | undefined): Promise<void> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'tollgate-eval-pw-'))
  const isHeaded = variant === 'playwright-headed'
  const isStealthy = variant === 'headless-stealth' || variant === 'headless-stealth-patched'
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: !isHeaded,
    args: [...REQUIRED_ARGS, ...(isHeaded ? [] : ['--disable-gpu']), ...(isStealthy ? ['--disable-blink-features=AutomationControlled'] : [])],
    ignoreDefaultArgs: isStealthy ? ['--enable-automation'] : undefined,
    userAgent: isStealthy ? LINUX_CHROME_USER_AGENT : undefined,
    env: isHeaded && display !== undefined ? { ...process.env, DISPLAY: display } : undefined,
    viewport: isHeaded ? null : { width: 1280, height: 800 },
  })
  if (variant === 'headless-stealth-patched') await context.addInitScript(patchLikeStealthPlugins)
  try {
    const page = context.pages()[0] ?? await context.newPage()
    await page.goto(`${baseUrl}/demo`)
    const email = `user${randomInt(1000, 99_999)}@example.org`
    if (isHeaded) {
      for (let i = 0; i < 4; i++) await page.mouse.move(randomInt(50, 900), randomInt(50, 600), { steps: randomInt(15, 40) })
      await page.locator('#signup-email').click()
      await page.keyboard.type(email, { delay: randomInt(60, 140) })
      await page.mouse.move(randomInt(50, 600), randomInt(300, 500), { steps: 20 })
      await page.locator('#signup-form button[type="submit"]').click()
    } else {
      await page.fill('#signup-email', email)
      await page.click('#signup-form button[type="submit"]')
    }
    await waitForDemoOutcome(page, 60_000)
  } finally {
    await context.close()
    await rm(userDataDir, { recursive: true, force: true })
  }
}
