import { abortedError, TollgateError, type TollgateErrorCode } from '../errors.js'
import { abortIfRemoved, assetsFolderOf, execute, onReset } from '../execute.js'
import { languageFor, type Language } from '../language.js'
import { loadStrings, messageFor, statusText, writeText, type TollgateStrings } from '../strings.js'
import type { TollgateStatus } from '../types.js'

/**
 * A widget of the vendors' page APIs (compat-entry.ts): where Turnstile, reCAPTCHA or hCaptcha
 * would draw a box, Tollgate gets a token invisibly, writes it into the hidden fields the
 * vendor's script would add (so the form posts it under the name the site's backend reads), and
 * calls the page's callbacks as the vendor's script would. The box shows the SDK's status line.
 */
export interface WidgetOptions {
  siteKey: string
  action?: string
  cData?: string
  /** The language the page asked for (Turnstile's `language`, hCaptcha's `hl`); `auto` or none follows the page and the browser. */
  language?: string | undefined
  /** The hidden fields the vendor adds, filled with the token: `cf-turnstile-response` in an input, `g-recaptcha-response` in a textarea. */
  fields: readonly { name: string; tag: 'input' | 'textarea'; id?: string }[]
  onToken?: (token: string) => void
  /** Gets the token that expired, as Turnstile's expired-callback does (reCAPTCHA's and hCaptcha's get nothing: page-api.ts, bareCallbackOf). */
  onExpired?: (token: string) => void
  /** The page's error callback; without one, the failure is written to the console. */
  onError?: (error: TollgateError) => void
  /**
   * Gets its token as soon as it is rendered, and again after a reset (a checkbox, which has no
   * box to tick here; Turnstile's `execution: 'render'`); else when the page executes it.
   */
  startsBySelf: boolean
  /**
   * The container is a button (reCAPTCHA's and hCaptcha's binding): its click is held, gets the
   * token, and the page's callback (which usually submits the form) goes on from there.
   */
  runsOnClick: boolean
  /**
   * What an expired token leads to (Turnstile's `refresh-expired`): `auto`, a new run at once;
   * `manual`, the status says so and a self-starting widget offers a button for a new run (as
   * reCAPTCHA's and hCaptcha's checkboxes come back to be ticked); `never`, the status says so.
   */
  refreshExpired: 'auto' | 'manual' | 'never'
  /** A failure that may pass (the network, the service) is tried again, RETRY_DELAY_MS later, up to MAX_RETRIES times (Turnstile's `retry: 'auto'`). */
  retriesFailures: boolean
}

/** A token's life (DESIGN section 6): the most a widget counts on, whatever this device's clock says. */
const TOKEN_LIFETIME_MS = 300_000
/** A widget lets its token go this long before it expires, as Turnstile does: a form posted then still redeems it. */
const EXPIRY_MARGIN_MS = 5_000
/** Turnstile's default retry interval. */
const RETRY_DELAY_MS = 8_000
const MAX_RETRIES = 3
const PASSING_FAILURES: ReadonlySet<TollgateErrorCode> = new Set(['network_error', 'server_error', 'invalid_response', 'rate_limited', 'timeout'])

/**
 * Every verification in flight dies with a reset() of the whole SDK, and so do the widgets' tokens;
 * reset(target) is for the forms of bindForms only, and leaves them be.
 */
const widgets = new Set<Widget>()
onReset((target) => {
  if (!target) for (const widget of widgets) widget.reset()
})
// A timer does not run while a laptop sleeps or a phone freezes the tab (nor in the back/forward
// cache): back on the page, a token past its time expires at once rather than when the timer wakes.
const expireOverdue = () => {
  for (const widget of widgets) widget.expireIfOverdue()
}
addEventListener('pageshow', (event) => {
  if (event.persisted) for (const widget of widgets) widget.dropRestoredToken()
  expireOverdue()
})
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') expireOverdue()
})

/**
 * Calls the page's own function: what it throws is the page's error, reported as uncaught (in the
 * console, and to the page's error handlers) without stopping the widget.
 */
function callPage<Args extends unknown[]>(callback: ((...args: Args) => void) | undefined, ...args: Args): void {
  try {
    callback?.(...args)
  } catch (error) {
    setTimeout(() => {
      throw error
    })
  }
}

/** A button or input: a widget bound to it waits for its click, and puts its fields beside it. */
export function isButton(element: HTMLElement): boolean {
  return element instanceof HTMLButtonElement || element instanceof HTMLInputElement
}

/** The element the vendor's box would be drawn in; a button the widget is bound to gets a sibling instead. */
function boxFor(container: HTMLElement): HTMLElement {
  if (!isButton(container)) return container
  const box = document.createElement('div')
  box.hidden = true
  box.setAttribute('data-tollgate-widget', '')
  container.after(box)
  return box
}

export class Widget {
  /** The latest token, until it expires, is reset or is replaced; '' before. */
  token = ''
  /** After remove(): the widget does nothing more (a button it was bound to may still be clicked). */
  isRemoved = false
  /** When the token expires by this device's clock (0: there has been none since the last reset). */
  private expiresAt = 0
  private run: { controller: AbortController; promise: Promise<string>; action: string | undefined } | undefined
  private expiryTimer: ReturnType<typeof setTimeout> | undefined
  private retryTimer: ReturnType<typeof setTimeout> | undefined
  private retries = 0
  /** The latest run failed (a reset then waits for the visitor or the page: no loop with an error callback that resets). */
  private hasFailed = false
  /** The container has been in the page (when the widget was made or started): leaving it afterwards is a removal, not having come yet is not. */
  private wasConnected: boolean
  /** Waits for a container that has not come into the page yet, to start it then (one, however often it is started before). */
  private attachObserver: MutationObserver | undefined
  /** A self-starting widget's button for a new run, after a failure or an expiry (made when first needed). */
  private runButton: HTMLButtonElement | undefined
  private readonly box: HTMLElement
  private readonly fields: HTMLInputElement[] | HTMLTextAreaElement[]
  private readonly status: HTMLElement | undefined
  private readonly language: Language

  constructor(readonly container: HTMLElement, readonly options: WidgetOptions) {
    this.wasConnected = container.isConnected
    this.box = boxFor(container)
    this.fields = options.fields.map(({ name, tag, id }) => {
      const field = document.createElement(tag)
      field.name = name
      if (id !== undefined) field.id = id
      if (field instanceof HTMLInputElement) field.type = 'hidden'
      else {
        field.className = name
        field.style.display = 'none'
      }
      this.box.append(field)
      return field
    }) as HTMLInputElement[]
    if (this.box === container) {
      this.status = document.createElement('div')
      this.status.className = 'tollgate-status'
      this.status.setAttribute('role', 'status')
      this.status.setAttribute('aria-live', 'polite')
      this.box.append(this.status)
    }
    this.language = languageFor(container, options.language)
    loadStrings(this.language, assetsFolderOf({}))
    widgets.add(this)
    if (options.runsOnClick) {
      container.addEventListener('click', (event) => {
        // A removed widget leaves the button to do what it did before.
        if (this.isRemoved) return
        event.preventDefault()
        this.start()
      })
    }
    if (options.startsBySelf) this.start()
  }

  isExpired(): boolean {
    return this.token === '' ? this.expiresAt !== 0 : Date.now() >= this.expiresAt
  }

  /**
   * Gets a fresh token (each redeems once): the one being fetched when a run is in flight. The
   * promise rejects with the failure, which the page's error callback hears of as well. `action`
   * is this run's (reCAPTCHA's execute(widgetId, { action })), else the widget's: one asked for
   * while a run of another action is in flight runs after it (its token would not redeem for it).
   */
  execute(action = this.options.action): Promise<string> {
    if (this.isRemoved) return Promise.reject(abortedError())
    if (this.run !== undefined) {
      if (this.run.action === action) return this.run.promise
      const next = () => this.execute(action)
      return this.run.promise.then(next, next)
    }
    this.clearToken()
    clearTimeout(this.retryTimer)
    if (this.runButton) {
      // Hidden, the button would drop the focus of the visitor who pressed it to the page's top
      // (WCAG 2.4.3): the status line, which tells the run, holds it until offerRun gives it back.
      if (this.runButton.matches(':focus')) this.status?.focus()
      this.runButton.hidden = true
    }
    const controller = new AbortController()
    // A container that leaves the page (a single-page app's view changed without remove()) stops the run.
    const release = abortIfRemoved(this.container, controller)
    const promise = execute({
      siteKey: this.options.siteKey,
      action,
      cData: this.options.cData,
      signal: controller.signal,
      onStatus: (status) => this.show(status),
    }).then(
      (result) => {
        release()
        if (this.run?.controller === controller) this.run = undefined
        // reset() or remove() came while the answer was on its way: the page wants none.
        if (controller.signal.aborted) throw abortedError()
        this.retries = 0
        this.hasFailed = false
        this.accept(result.token)
        return result.token
      },
      (error: unknown) => {
        release()
        if (this.run?.controller === controller) this.run = undefined
        const typed = error instanceof TollgateError ? error : new TollgateError('invalid_response', String(error))
        if (typed.code !== 'aborted') this.fail(typed)
        // Its container left the page: the widget is let go, as start() lets it go.
        else if (this.wasConnected && !this.container.isConnected) this.remove()
        throw typed
      },
    )
    this.run = { controller, promise, action }
    return promise
  }

  /**
   * Runs execute() for a page that listens through callbacks only: its failure is not left
   * unhandled. A widget whose container has left the page (a single-page app's view changed
   * without remove()) is removed instead of solving for nobody; one whose container has not
   * come into the page yet (react-google-recaptcha renders into a new element, then attaches
   * it) starts once it comes.
   */
  start(): void {
    if (this.container.isConnected) {
      this.wasConnected = true
      this.execute().catch(() => undefined)
    } else if (this.wasConnected) this.remove()
    else {
      this.attachObserver ??= new MutationObserver(() => {
        if (!this.container.isConnected) return
        this.attachObserver?.disconnect()
        this.start()
      })
      // Observing the same node again only renews the options: still one callback per change.
      this.attachObserver.observe(document, { childList: true, subtree: true })
    }
  }

  /**
   * Stops a run in flight and forgets the token, as a vendor's reset does; a widget that gets its
   * token by itself then gets a new one (the vendor's would run its challenge again, or show its
   * box to tick), so that a page that resets after a refused submit has a token again. After a
   * failed run it only clears and offers its button, as hCaptcha's and reCAPTCHA's reset show
   * their checkbox again: a page whose error callback resets (@hcaptcha/react-hcaptcha) would
   * otherwise ask the service again and again, as fast as it answers. The failure's sentence
   * stays: its reference is what a blocked visitor gives the site's support.
   */
  reset(): void {
    this.stop()
    this.expiresAt = 0
    if (!this.hasFailed) this.show('idle')
    if (!this.options.startsBySelf || this.isRemoved) return
    if (this.hasFailed) this.offerRun()
    else this.start()
  }

  /** Takes out what the widget put into the page; it does nothing more. */
  remove(): void {
    this.isRemoved = true
    this.stop()
    this.attachObserver?.disconnect()
    widgets.delete(this)
    if (this.box === this.container) {
      for (const field of this.fields) field.remove()
      this.status?.remove()
      this.runButton?.remove()
    } else this.box.remove()
  }

  /** Expires the token now when its time has passed while timers were not running. */
  expireIfOverdue(): void {
    if (this.token !== '' && Date.now() >= this.expiresAt) this.expire()
  }

  /**
   * The page came back from the back/forward cache as it was left, so a token still in the fields
   * was there when the visitor left it, and may have been posted (the form submitted, then Back):
   * Siteverify redeems it once. It is dropped as an expired one is; a widget that gets its token
   * by itself gets a new one, one that waits for the page (execute(), a click) waits again.
   */
  dropRestoredToken(): void {
    if (this.token === '') return
    if (!this.container.isConnected) return this.remove()
    const token = this.token
    this.clearToken()
    this.show('idle')
    callPage(this.options.onExpired, token)
    if (this.options.startsBySelf && !this.isRemoved) this.start()
  }

  private stop(): void {
    this.run?.controller.abort()
    this.run = undefined
    clearTimeout(this.retryTimer)
    this.retries = 0
    this.clearToken()
  }

  /**
   * The token was minted a moment ago and lives 300 s. Its `expiresAt` is by the service's clock,
   * and this device's may be minutes off either way: counted by it, the token would expire at
   * once (and a widget that refreshes would solve again and again) or much too late.
   */
  private accept(token: string): void {
    const lifetime = TOKEN_LIFETIME_MS - EXPIRY_MARGIN_MS
    this.token = token
    this.expiresAt = Date.now() + lifetime
    if (this.runButton) this.runButton.hidden = true
    for (const field of this.fields) field.value = token
    this.expiryTimer = setTimeout(() => this.expire(), lifetime)
    callPage(this.options.onToken, token)
  }

  private expire(): void {
    if (!this.container.isConnected) return this.remove()
    const { token } = this
    this.clearToken()
    callPage(this.options.onExpired, token)
    // The page's callback reset the widget (@hcaptcha/react-hcaptcha's does, then calls the page's
    // onExpire), executed it or removed it: that is the widget's state now, not an expiry to show.
    if (this.isRemoved || this.run !== undefined || this.expiresAt === 0) return
    if (this.options.refreshExpired === 'auto') return this.start()
    this.showText((strings) => strings.expired)
    if (this.options.refreshExpired === 'manual') this.offerRun()
  }

  /**
   * The failure is told, and the widget offers its button. The automatic retry is
   * set before the page's error callback runs, so that a reset() there cancels it as well.
   */
  private fail(error: TollgateError): void {
    this.hasFailed = true
    this.showText((strings) => messageFor(error.code, error.reference, strings))
    this.offerRun()
    if (this.options.retriesFailures && PASSING_FAILURES.has(error.code) && this.retries < MAX_RETRIES) {
      this.retries += 1
      this.retryTimer = setTimeout(() => this.start(), RETRY_DELAY_MS)
    }
    if (this.options.onError !== undefined) callPage(this.options.onError, error)
    else console.warn(`Tollgate: ${error.code}: ${error.message}`)
  }

  /**
   * Shows the button that starts a new run (Turnstile's refresh link, the vendors' checkbox to
   * tick again) in a self-starting widget's box; the others wait for their page's execute() or
   * their own button's click, whose callback may submit the form.
   */
  private offerRun(): void {
    if (this.status === undefined || !this.options.startsBySelf) return
    if (!this.runButton) {
      this.runButton = document.createElement('button')
      this.runButton.type = 'button'
      // Pages style it by its class; unstyled, it is still a 24 px target (WCAG 2.5.8).
      this.runButton.className = 'tollgate-retry'
      this.runButton.style.minHeight = '24px'
      this.runButton.addEventListener('click', () => this.start())
      this.box.append(this.runButton)
      writeText(this.runButton, this.language, (strings) => strings.refresh)
      // Focusable by script only, for execute() to keep the focus in the widget.
      this.status.tabIndex = -1
    }
    this.runButton.hidden = false
    // The focus is in the widget only when the visitor pressed the button for the run that failed.
    if (this.status.matches(':focus')) this.runButton.focus()
  }

  private clearToken(): void {
    clearTimeout(this.expiryTimer)
    this.token = ''
    for (const field of this.fields) field.value = ''
  }

  private show(status: TollgateStatus): void {
    this.showText(statusText(status))
  }

  private showText(text: (strings: Required<TollgateStrings>) => string): void {
    if (this.status !== undefined) writeText(this.status, this.language, text)
  }
}
