import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, holdRequests, openDashboard, type OpenDashboard } from './dashboard-support.js'

interface Focused {
  tag: string
  name: string
  id: string
  isInDialog: boolean
  /** Whether a focus ring is drawn: an outline that is not "none" and wider than 0. */
  hasFocusRing: boolean
}

/** What a screen reader would announce for the focused element, roughly: its label or its text. */
function readFocus(page: Page): Promise<Focused> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null
    if (element === null) return { tag: '', name: '', id: '', isInDialog: false, hasFocusRing: false }
    const label = element instanceof HTMLInputElement || element instanceof HTMLSelectElement || element instanceof HTMLTextAreaElement
      ? element.labels?.[0]?.textContent
      : undefined
    const style = getComputedStyle(element)
    return {
      tag: element.tagName.toLowerCase(),
      name: (element.getAttribute('aria-label') ?? label ?? element.textContent ?? '').replace(/\s+/g, ' ').trim(),
      id: element.id,
      isInDialog: element.closest('dialog') !== null,
      hasFocusRing: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0,
    }
  })
}

/** Presses Tab until the focused element is named `name`; fails if it is not reachable. */
async function tabTo(page: Page, name: string, options: { backwards?: boolean } = {}): Promise<Focused> {
  for (let presses = 0; presses < 40; presses += 1) {
    await page.keyboard.press(options.backwards === true ? 'Shift+Tab' : 'Tab')
    const focused = await readFocus(page)
    if (focused.name === name) return focused
  }
  throw new Error(`"${name}" cannot be reached with the Tab key`)
}

/**
 * The dashboard without a mouse: every step below uses the keyboard only, and every control
 * it reaches shows a focus ring.
 */
describe.skipIf(!hasChromium())('the dashboard with the keyboard only', () => {
  let dashboard: OpenDashboard
  let origin: string
  let page: Page
  let pageErrors: string[]

  beforeAll(async () => {
    dashboard = await openDashboard()
    ;({ origin, page, pageErrors } = dashboard)
  }, 120_000)
  afterAll(() => dashboard?.close())

  it('keeps the focus on Log in while a wrong password is checked, and sends it once', async () => {
    await page.goto(`${origin}/dashboard/login`)
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    await tabTo(page, 'E-mail address')
    await page.keyboard.type('nobody-here@example.com')
    await tabTo(page, 'Password')
    await page.keyboard.type('not the password of anyone')
    await tabTo(page, 'Log in')
    const logIns = await holdRequests(page, '**/api/v1/sessions', 'POST')
    try {
      await page.keyboard.press('Enter')
      const busy = page.getByRole('button', { name: 'Please wait…' })
      await busy.waitFor()
      // Busy, the button keeps the focus (a disabled one dropped it to the page) and ignores a second
      // press; Enter in the password field, which the browser turns into a press of it, sends nothing either.
      expect(await readFocus(page)).toMatchObject({ tag: 'button', name: 'Please wait…' })
      expect(await busy.getAttribute('aria-disabled')).toBe('true')
      await page.keyboard.press('Enter')
      await tabTo(page, 'Password', { backwards: true })
      await page.keyboard.press('Enter')
      await tabTo(page, 'Please wait…')
    } finally {
      await logIns.release()
    }
    await page.getByRole('alert').filter({ hasText: 'e-mail address or password' }).waitFor()
    // Told the error, the keyboard is where it was: Log in, to try again after correcting the password.
    expect(await readFocus(page)).toMatchObject({ tag: 'button', name: 'Log in', hasFocusRing: true })
    expect(logIns.count()).toBe(1)
  })

  it('signs up, moving focus to each new page heading', async () => {
    await page.goto(`${origin}/dashboard/`)
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    const link = await tabTo(page, 'Create an account')
    expect(link.hasFocusRing).toBe(true)
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Create your account' }).waitFor()
    await expect.poll(() => readFocus(page)).toMatchObject({ tag: 'h1', name: 'Create your account' })

    await page.keyboard.press('Tab')
    expect(await readFocus(page)).toMatchObject({ id: 'auth-email', hasFocusRing: true })
    await page.keyboard.type('keyboard-user@example.com')
    await page.keyboard.press('Tab')
    expect((await readFocus(page)).id).toBe('auth-password')
    await page.keyboard.type('a long enough password')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    await expect.poll(() => readFocus(page)).toMatchObject({ tag: 'h1', name: 'Sites' })
  })

  it('offers a skip link first on every signed-in page', async () => {
    await page.reload()
    await page.getByRole('heading', { name: 'Sites', exact: true }).waitFor()
    await page.keyboard.press('Tab')
    const skip = await readFocus(page)
    expect(skip).toMatchObject({ name: 'Skip to content', hasFocusRing: true })
    expect(await page.locator('.skip-link').evaluate((element) => element.getBoundingClientRect().top >= 0)).toBe(true)
    await page.keyboard.press('Enter')
    expect((await readFocus(page)).id).toBe('main')
  })

  it('creates a site and copies its key', async () => {
    await tabTo(page, 'Add your first site')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Add a site' }).waitFor()
    // The new page takes focus on its heading once drawn: one Tab before that would start from
    // the old page (seen under load in CI).
    await expect.poll(() => readFocus(page)).toMatchObject({ tag: 'h1', name: 'Add a site' })
    await page.keyboard.press('Tab')
    expect((await readFocus(page)).id).toBe('site-name')
    await page.keyboard.type('Keyboard shop')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Keyboard shop is ready' }).waitFor()
    // This page too takes focus on its heading after its next frame. Under load that came after
    // the Tabs had reached the copy button, and Enter went to the heading: nothing was copied, and
    // the clipboard read back empty (CI). A loaded machine's frame may come later than a second.
    await expect.poll(() => readFocus(page), { timeout: 10_000 }).toMatchObject({ tag: 'h1', name: 'Keyboard shop is ready' })

    const copy = await tabTo(page, 'Copy site key')
    expect(copy.hasFocusRing).toBe(true)
    await page.keyboard.press('Enter')
    // The button tells what came of the copy once the clipboard has answered (for 2 seconds).
    const outcome = await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('[role="status"]'), (status) => status.textContent ?? '').find((text) => text.includes('site key')),
    )
    expect(await outcome.jsonValue()).toBe('site key copied to the clipboard')
    const siteKey = await page.getByLabel('Site key', { exact: true }).inputValue()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(siteKey)

    // Without the Clipboard API the copy falls back to execCommand, whose text area takes the
    // focus for a moment: it comes back to the button. Where that fails too, the page says so.
    await page.evaluate(() => {
      navigator.clipboard.writeText = () => Promise.reject(new DOMException('Refused', 'NotAllowedError'))
      document.execCommand = () => false
    })
    await page.keyboard.press('Enter')
    const failure = page.locator('.copy-button__error')
    await failure.waitFor()
    expect(await failure.textContent()).toBe('Could not copy the site key; select it and copy it by hand')
    expect(await readFocus(page)).toMatchObject({ tag: 'button', name: 'Copy site key' })
    await page.evaluate(() => {
      Reflect.deleteProperty(navigator.clipboard, 'writeText')
      Reflect.deleteProperty(document, 'execCommand')
    })
  })

  it('shows a refused setting beside its field and moves focus there', async () => {
    await tabTo(page, 'Continue to settings')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Settings' }).waitFor()
    await tabTo(page, 'Difficulty')
    await page.keyboard.press('ControlOrMeta+A')
    await page.keyboard.type('99')
    await page.keyboard.press('Enter')
    await page.locator('#settings-difficulty-error').waitFor()
    expect(await readFocus(page)).toMatchObject({ id: 'settings-difficulty' })
    expect(await page.locator('#settings-difficulty').getAttribute('aria-describedby')).toContain('settings-difficulty-error')
  })

  it('opens a confirmation that Escape closes, returning focus to its button', async () => {
    await tabTo(page, 'Keys and snippet', { backwards: true })
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Secret key and deletion' }).waitFor()
    await tabTo(page, 'Delete site')
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', { name: 'Delete Keyboard shop?' }).waitFor()
    expect(await readFocus(page)).toMatchObject({ name: 'Cancel', isInDialog: true })
    // Focus stays inside the modal dialog.
    for (let presses = 0; presses < 4; presses += 1) {
      await page.keyboard.press('Tab')
      const focused = await readFocus(page)
      if (focused.tag !== 'body') expect(focused.isInDialog).toBe(true)
    }
    await page.keyboard.press('Escape')
    await page.getByRole('dialog').waitFor({ state: 'hidden' })
    expect(await readFocus(page)).toMatchObject({ name: 'Delete site', isInDialog: false })
  })

  it('changes the analytics range with the arrow keys', async () => {
    await tabTo(page, 'Analytics', { backwards: true })
    await page.keyboard.press('Enter')
    await page.locator('.chart canvas').waitFor()
    const range = await tabTo(page, 'Last 24 hours')
    expect(range.tag).toBe('input')
    // The hidden radio's label draws the focus ring.
    expect(await page.locator('.segmented__option--checked').evaluate((element) => getComputedStyle(element).outlineStyle)).not.toBe('none')
    const statsAnswer = page.waitForResponse((response) => response.url().includes('/stats') && response.url().includes('interval=hour'))
    await page.keyboard.press('ArrowRight')
    await statsAnswer
    expect(await page.getByRole('radio', { name: 'Last 7 days' }).isChecked()).toBe(true)
    const dailyAnswer = page.waitForResponse((response) => response.url().includes('/stats') && response.url().includes('interval=day'))
    await page.keyboard.press('ArrowRight')
    await dailyAnswer
    expect(await page.getByRole('radio', { name: 'Last 30 days' }).isChecked()).toBe(true)
    // Refresh keeps the focus while it reloads, and ignores presses until it is done: pressed
    // twice at once, it loads as often as pressed once.
    await tabTo(page, 'Refresh')
    const statsRequestsOf = async (presses: number) => {
      let count = 0
      const countStats = (request: { url(): string }) => {
        if (request.url().includes('/stats')) count += 1
      }
      page.on('request', countStats)
      // The answers wait until every press is made: on a loaded machine a load could otherwise end
      // between two presses, and the second would rightly load again.
      let release = () => {}
      const released = new Promise<void>((resolve) => {
        release = resolve
      })
      await page.route('**/stats?**', async (route) => {
        await released
        await route.fallback()
      })
      for (let press = 0; press < presses; press += 1) await page.keyboard.press('Enter')
      release()
      // A loaded machine may take longer than the poll's default second to finish the load.
      await expect.poll(() => page.getByRole('button', { name: 'Refresh' }).getAttribute('aria-disabled'), { timeout: 10_000 }).toBeNull()
      await page.waitForTimeout(300)
      await page.unroute('**/stats?**')
      page.off('request', countStats)
      return count
    }
    const once = await statsRequestsOf(1)
    expect(once).toBeGreaterThan(0)
    expect(await readFocus(page)).toMatchObject({ tag: 'button', name: 'Refresh' })
    // Preact runs the effect that starts a load (and then marks the button busy) after the next
    // frame; a loaded machine draws frames late, and a second press may come first. Without frames
    // (the effect then waits Preact's 100 ms fallback) the presses surely come first.
    await page.evaluate(() => {
      const ownWindow = window as unknown as { requestAnimationFrame: unknown; savedFrame?: unknown }
      ownWindow.savedFrame = ownWindow.requestAnimationFrame
      ownWindow.requestAnimationFrame = () => 0
    })
    try {
      expect(await statsRequestsOf(2)).toBe(once)
    } finally {
      // Frames come back even when the presses' check fails, so the tests after it are not failed by it.
      await page.evaluate(() => {
        const ownWindow = window as unknown as { requestAnimationFrame: unknown; savedFrame?: unknown }
        ownWindow.requestAnimationFrame = ownWindow.savedFrame
      })
    }
    expect(await readFocus(page)).toMatchObject({ tag: 'button', name: 'Refresh' })
  })

  it('keeps focus on the section after a confirmed action removes the button that opened it', async () => {
    /** Confirms the open dialog with its second button (Cancel is focused first). */
    const confirm = async (label: string) => {
      expect(await tabTo(page, label)).toMatchObject({ isInDialog: true })
      await page.keyboard.press('Enter')
    }
    await tabTo(page, 'Keys and snippet', { backwards: true })
    await page.keyboard.press('Enter')
    await tabTo(page, 'Rotate secret key')
    await page.keyboard.press('Enter')
    await confirm('Rotate secret key')
    await page.getByRole('heading', { name: 'Previous secret keys' }).waitFor()
    await tabTo(page, 'Stop the previous keys now')
    await page.keyboard.press('Enter')
    await confirm('Stop the previous keys')
    await page.getByRole('button', { name: 'Stop the previous keys now' }).waitFor({ state: 'detached' })
    expect(await readFocus(page)).toMatchObject({ tag: 'h2', name: 'Secret key and deletion' })

    await tabTo(page, 'Webhook', { backwards: true })
    await page.keyboard.press('Enter')
    await tabTo(page, 'Webhook URL')
    await page.keyboard.type('http://127.0.0.1:9/hooks/tollgate')
    await tabTo(page, 'Generate')
    await page.keyboard.press('Enter')
    await tabTo(page, 'Save webhook')
    await page.keyboard.press('Enter')
    await page.getByText('Webhook saved.').waitFor()
    // The button stays focused through its request (a disabled one would drop focus to the page).
    expect(await readFocus(page)).toMatchObject({ tag: 'button', name: 'Save webhook' })
    await tabTo(page, 'Remove webhook')
    await page.keyboard.press('Enter')
    await confirm('Remove webhook')
    await page.locator('.form__actions').getByRole('button', { name: 'Remove webhook' }).waitFor({ state: 'detached' })
    expect(await readFocus(page)).toMatchObject({ tag: 'h2', name: 'Webhook' })

    await tabTo(page, 'API keys', { backwards: true })
    await page.keyboard.press('Enter')
    // The new page takes focus on its heading once drawn: tabbing before that would start from
    // the old page (seen under load in CI).
    await expect.poll(() => readFocus(page)).toMatchObject({ tag: 'h1', name: 'API keys' })
    await tabTo(page, 'Name')
    await page.keyboard.type('keyboard script')
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('keyboard script')
    // The access is one stop of the Tab key, its choices the arrow keys'.
    expect(await tabTo(page, 'Full access')).toMatchObject({ tag: 'input', hasFocusRing: true })
    await page.keyboard.press('ArrowDown')
    expect(await readFocus(page)).toMatchObject({ name: 'Read only', hasFocusRing: true })
    expect(await page.getByLabel('Read only').isChecked()).toBe(true)
    // The sites it may reach: one stop too ("All sites" checked), then the addresses (left empty:
    // any), then the password.
    await page.keyboard.press('Tab')
    expect((await readFocus(page)).id).toBe('api-key-sites-all')
    await page.keyboard.press('Tab')
    expect(await readFocus(page)).toMatchObject({ id: 'api-key-addresses', hasFocusRing: true })
    await page.keyboard.press('Tab')
    expect((await readFocus(page)).id).toBe('api-key-password')
    await page.keyboard.type('a long enough password')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Your new API key “keyboard script”' }).waitFor()
    expect(await page.locator('.table tbody tr').filter({ hasText: 'keyboard script' }).locator('td').nth(1).textContent()).toBe('Read only')
    await tabTo(page, 'Revoke keyboard script')
    await page.keyboard.press('Enter')
    await confirm('Revoke key')
    await page.getByText('No API keys yet.').waitFor()
    expect(await readFocus(page)).toMatchObject({ tag: 'h2', name: 'Your keys' })
  })

  it('invites to the site, keeping the focus on Invite while the invitation is made', async () => {
    await tabTo(page, 'Sites', { backwards: true })
    await page.keyboard.press('Enter')
    await expect.poll(() => readFocus(page)).toMatchObject({ tag: 'h1', name: 'Sites' })
    await tabTo(page, 'Keyboard shop')
    await page.keyboard.press('Enter')
    await expect.poll(() => readFocus(page)).toMatchObject({ tag: 'h1', name: 'Keyboard shop' })
    await tabTo(page, 'Members')
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Invite' }).waitFor()
    await tabTo(page, 'Only for this e-mail address (optional)')
    await page.keyboard.type('colleague@example.com')
    await tabTo(page, 'Invite')
    const invitations = await holdRequests(page, '**/invitations', 'POST')
    try {
      await page.keyboard.press('Enter')
      const invite = page.getByRole('button', { name: 'Invite', exact: true })
      await expect.poll(() => invite.getAttribute('aria-disabled')).toBe('true')
      expect(await readFocus(page)).toMatchObject({ tag: 'button', name: 'Invite' })
      // Enter in the address field presses Invite too: ignored while the first invitation is made.
      await tabTo(page, 'Only for this e-mail address (optional)', { backwards: true })
      await page.keyboard.press('Enter')
      await tabTo(page, 'Invite')
    } finally {
      await invitations.release()
    }
    await page.getByText('Send this link to the invitee.').waitFor()
    expect(await readFocus(page)).toMatchObject({ tag: 'button', name: 'Invite' })
    expect(invitations.count()).toBe(1)
  })

  it('logs out, keeping the focus on Log out when that fails', async () => {
    await tabTo(page, 'Log out', { backwards: true })
    // The service cannot end the session: the page says so, and Log out has the focus to try again.
    let refusedLogOuts = 0
    await page.route('**/api/v1/sessions', (route) => {
      if (route.request().method() !== 'DELETE') return route.fallback()
      refusedLogOuts += 1
      return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: { code: 'service_unavailable', message: 'A dependency of the service is unavailable; retry later.', requestId: 'r-1' } }) })
    })
    // Each step apart, so that a failure says which one did not happen (once, under CI's load, the alert did not come).
    expect(await readFocus(page)).toMatchObject({ tag: 'button', name: 'Log out' })
    await page.keyboard.press('Enter')
    await expect.poll(() => refusedLogOuts, { message: 'Enter on Log out sent its DELETE /api/v1/sessions' }).toBe(1)
    await page.getByRole('alert').filter({ hasText: 'Logging out failed' }).waitFor()
    expect(await readFocus(page)).toMatchObject({ tag: 'button', name: 'Log out', hasFocusRing: true })
    await page.unroute('**/api/v1/sessions')
    pageErrors.splice(0, pageErrors.length, ...pageErrors.filter((error) => !/status of 503/.test(error)))
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    expect(pageErrors).toEqual([])
  })
})
