import { abortedError, TollgateError } from './errors.js'
import { assetsFolderOf, executeWith, isConnected, onReset, resolveOptions, track, type ResetTarget } from './execute.js'
import { languageFor, type Language } from './language.js'
import { loadStrings, messageFor, setStrings, statusText, writeText, type TollgateStrings } from './strings.js'
import type { ExecuteOptions, TollgateStatus } from './types.js'
import { fetchAndSolve, isRetryable, type Solved } from './verify-flow.js'

/**
 * The declarative mode: every `form[data-tollgate]` gets a hidden `tollgate-token` field (or the
 * name given by data-response-field-name) that is filled before the form submits. Solving starts when the visitor first touches the form, so the
 * token is usually ready at submit; the submission itself (with the behaviour signals gathered
 * until then) happens on submit. Listeners sit on the document, so forms added later (single-page
 * apps) work too, and every form has its own state. A submit event does not leave a shadow root,
 * so forms inside web components are reached by binding their root as well (`root`).
 */
export interface BindOptions {
  siteKey?: string
  apiUrl?: string
  assetsUrl?: string
  /**
   * The hidden field's name (default `tollgate-token`): a backend written for Turnstile reads
   * `cf-turnstile-response`, one for reCAPTCHA `g-recaptcha-response`. A form's own
   * `data-response-field-name` wins.
   */
  fieldName?: string
  /** The page's action name and data for Siteverify (ExecuteOptions); a form's own `data-action` and `data-cdata` win. */
  action?: string
  cData?: string
  /**
   * The language of the forms' texts (`de`, `pt-BR`; `auto`, the default, follows the page and the
   * browser: language.ts); a form's own `data-lang` wins.
   */
  language?: string
  /**
   * A shadow root whose `form[data-tollgate]` to protect besides the document's: a submit inside
   * a web component never reaches the document. The other options given with it apply to that
   * root's forms only; what they leave out comes from the document's binding.
   */
  root?: ShadowRoot
}

type Root = Document | ShadowRoot

const FORM_SELECTOR = 'form[data-tollgate]'
const TOKEN_FIELD = 'tollgate-token'

interface FormState {
  /** The early solve; it rejects with its failure, which the submit reports (see verifyAndSubmit). */
  presolve: Promise<Solved> | undefined
  /** While the early solve searches: when its search began (Date.now()), for the slow notice of a submit that waits for it. */
  searchedFrom?: number
  /** Set by a submit that waits for the early solve: told when the early solve's search begins. */
  onSearch?: () => void
  /** When the early solve failed (Date.now()): a failure older than STALE_FAILURE_MS is not reported but tried again. */
  failedAt?: number
  busy: boolean
  /** The form failed offline: the browser's next `online` event, if soon enough, submits it again (retryWhenOnline). */
  offline?: boolean
}

/** A failure this old may be gone (the connection back, the service up again): the submit tries afresh. */
const STALE_FAILURE_MS = 10_000

/** A form that failed offline is submitted again only if the browser is back online within this long (retryWhenOnline). */
const ONLINE_RETRY_MS = 300_000

/**
 * After this long solving, the status line says the check is still at work (a cheap phone may need
 * a minute): the search for the answer only, not the wait for the network (its challenge, its
 * worker's files), which the notice would wrongly blame on the device.
 */
const SLOW_SOLVE_MS = 5_000

/**
 * Set on a form while the SDK re-submits it after filling the token, so that the submit passes
 * through. It lives on the element under a registered symbol, so that every copy of the SDK on
 * the page (a tag included twice, or the tag and the module) lets it through: one copy's own flag
 * would let the other copy catch the submit, verify and re-submit it, back and forth for ever.
 */
const PASSING = Symbol.for('tollgate.resubmitting')
/**
 * Set on a form, under a registered symbol too, by the copy of the SDK that binds it first (the
 * tag, or the module build a page bundles besides): the others leave it be, so that one form
 * fetches one challenge, not one per copy.
 */
const BINDER = Symbol.for('tollgate.binder')
const SELF = {}
type MarkedForm = HTMLFormElement & { [PASSING]?: boolean; [BINDER]?: object }

/** Claims the form for this copy of the SDK, unless another has: whether it is this copy's. */
function claim(form: MarkedForm): boolean {
  return (form[BINDER] ??= SELF) === SELF
}

let states = new WeakMap<HTMLFormElement, FormState>()
let bound: BindOptions | undefined
/** The shadow roots bound besides the document, with their own options. */
const rootOptions = new WeakMap<ShadowRoot, BindOptions>()
const shadowRoots: WeakRef<ShadowRoot>[] = []

/*
 * A form's own members are read through their prototypes: a control named `dataset`,
 * `querySelector` or `append` shadows the form's property of that name (DOM clobbering), and the
 * SDK would read the control instead (a data-action ignored, a TypeError and no submit).
 */
function dataOf(form: HTMLFormElement, name: string): string | undefined {
  return Element.prototype.getAttribute.call(form, `data-${name}`) ?? undefined
}

function inside<T extends Element>(form: HTMLFormElement, selector: string): T[] {
  return Array.from(Element.prototype.querySelectorAll.call<HTMLFormElement, [string], NodeListOf<T>>(form, selector))
}

function appendTo(form: HTMLFormElement, child: Element): void {
  Element.prototype.append.call(form, child)
}

function dispatch(form: HTMLFormElement, name: string, detail: unknown): void {
  EventTarget.prototype.dispatchEvent.call(form, new CustomEvent(name, { detail, bubbles: true }))
}

function stateOf(form: HTMLFormElement): FormState {
  let state = states.get(form)
  if (state === undefined) {
    state = { presolve: undefined, busy: false }
    states.set(form, state)
  }
  return state
}

function formOf(event: Event): HTMLFormElement | undefined {
  const target = event.target
  if (!(target instanceof Element)) return undefined
  // The target is the form itself for its submit event: a control named `closest` shadows the form's own.
  const form = Element.prototype.closest.call(target, FORM_SELECTOR)
  return form instanceof HTMLFormElement && claim(form) ? form : undefined
}

/** The binding that applies to a form: its shadow root's, then the document's. */
function bindingOf(form: HTMLFormElement): BindOptions {
  const root = Node.prototype.getRootNode.call(form)
  const own = root instanceof ShadowRoot ? rootOptions.get(root) : undefined
  return { ...bound, ...own }
}

function optionsOf(form: HTMLFormElement): ExecuteOptions {
  const binding = bindingOf(form)
  return {
    siteKey: dataOf(form, 'site-key') ?? binding.siteKey ?? '',
    apiUrl: binding.apiUrl,
    assetsUrl: binding.assetsUrl,
    action: dataOf(form, 'action') ?? binding.action,
    cData: dataOf(form, 'cdata') ?? binding.cData,
  }
}

/**
 * The form's field for the token: the page's own input of that name, else the hidden one the SDK
 * made, renamed when the name changed since (bindForms({ fieldName }) after the load), so that
 * the form never posts an empty field under the old name beside the token.
 */
function tokenFieldOf(form: HTMLFormElement): HTMLInputElement {
  const name = dataOf(form, 'response-field-name') ?? bindingOf(form).fieldName ?? TOKEN_FIELD
  const existing = inside<HTMLInputElement>(form, 'input').find((input) => input.name === name)
  if (existing !== undefined) return existing
  const field = inside<HTMLInputElement>(form, 'input[data-tollgate-field]')[0] ?? document.createElement('input')
  field.type = 'hidden'
  field.name = name
  field.setAttribute('data-tollgate-field', '')
  appendTo(form, field)
  return field
}

/** The live region that announces progress and failures to screen readers as well as eyes. */
function statusRegionOf(form: HTMLFormElement): HTMLElement {
  let region = inside<HTMLElement>(form, '[data-tollgate-status]')[0]
  if (region === undefined) {
    region = document.createElement('div')
    region.setAttribute('data-tollgate-status', '')
    appendTo(form, region)
  }
  // The page's own element too, keeping its classes: the README styles every status line by this class.
  region.classList.add('tollgate-status')
  region.setAttribute('role', 'status')
  region.setAttribute('aria-live', 'polite')
  return region
}

/** The language of the form's texts, whose translation is fetched now if it is not yet. */
function languageOf(form: HTMLFormElement): Language {
  const binding = bindingOf(form)
  const language = languageFor(form, dataOf(form, 'lang'), binding.language)
  loadStrings(language, assetsFolderOf(binding))
  return language
}

function prepare(form: HTMLFormElement): void {
  tokenFieldOf(form)
  statusRegionOf(form)
  languageOf(form)
}

/** Shows a text in the form's language; an empty text (English has it too) goes at once. */
function show(form: HTMLFormElement, text: (strings: Required<TollgateStrings>) => string, language = languageOf(form)): void {
  writeText(statusRegionOf(form), language, text)
}

function presolve(form: HTMLFormElement): void {
  const state = stateOf(form)
  if (state.presolve !== undefined || state.busy) return
  // The early solve's challenge request is sent again after a time-out as well: nobody waits for it yet.
  const run = track((controller) => fetchAndSolve({
    ...resolveOptions(optionsOf(form), controller),
    retryTimeout: true,
    onSearch: () => {
      state.searchedFrom = Date.now()
      state.onSearch?.()
    },
  }), form)
  state.presolve = run
  // Kept for the submit, which reports the failure; a visitor who never submits must not see it.
  // One stopped (its form left the page) is dropped: back in the page, the form solves afresh.
  run
    .catch((error: unknown) => {
      state.failedAt = Date.now()
      if ((error as TollgateError).code === 'aborted' && state.presolve === run) state.presolve = undefined
    })
    .finally(() => (state.searchedFrom = undefined))
}

/**
 * Runs tracked (`controller`), so that a reset() while the submit waits for the presolve stops it
 * too. A form the page removes meanwhile (a single-page app's view that went away) is reset as
 * well: its solution is not sent, it is not submitted, and it gets `aborted`.
 */
async function verifyAndSubmit(form: HTMLFormElement, state: FormState, submitter: HTMLElement | null, controller: AbortController): Promise<void> {
  const { signal } = controller
  // track() aborts the run once the form has left the page; this tells it at once, between two steps.
  const abortIfRemoved = () => isConnected(form) || controller.abort()
  // The submitter waits with the form, `aria-disabled` and `aria-busy`, so a screen reader tells
  // that pressing again does nothing (a press submits, and the busy form ignores it: start()). It
  // is not `disabled`: the browser would take the focus from it, and a keyboard user would be left
  // at the top of the page (WCAG 2.4.3). It is given back before the re-submit and whatever the
  // outcome, and once only: the page's own submit handler may mark it again (a double-submit
  // guard), and a second release would undo that.
  let holding = false
  const hold = (on: boolean) => {
    if (submitter === null || on === holding) return
    holding = on
    for (const name of ['aria-disabled', 'aria-busy']) {
      if (on) submitter.setAttribute(name, 'true')
      else submitter.removeAttribute(name)
    }
  }
  let slow: ReturnType<typeof setTimeout> | undefined
  const onStatus = (status: TollgateStatus) => {
    clearTimeout(slow)
    show(form, statusText(status))
  }
  // The slow notice, SLOW_SOLVE_MS after the search began (`since`); the next status clears it.
  const onSearch = (since = Date.now()) => {
    clearTimeout(slow)
    slow = setTimeout(() => show(form, (strings) => strings.slow), since + SLOW_SOLVE_MS - Date.now())
  }
  hold(true)
  try {
    const early = state.presolve
    state.presolve = undefined
    let presolved: Solved | undefined
    if (early !== undefined) {
      // The early solve reports no progress: a visitor who submits while it runs is told now, and
      // told it is slow once its search has run SLOW_SOLVE_MS (before the submit too).
      onStatus('solving')
      if (state.searchedFrom !== undefined) onSearch(state.searchedFrom)
      else state.onSearch = onSearch
      // A refused challenge is worth one fresh one (the flow's retry), and so is a 5xx (the
      // service, or its gateway, failing a moment: a 502-504 was already asked again) and any
      // failure of STALE_FAILURE_MS ago (a phone that was offline when the page loaded); another
      // recent one would come again, only later: an unreachable service after another 15 s, a
      // wrong key after another request. A reset()'s abort goes through as it is.
      presolved = await early.catch((error: unknown) => {
        if (isRetryable(error) || ((error as TollgateError).status ?? 0) >= 500 || Date.now() - (state.failedAt ?? Date.now()) > STALE_FAILURE_MS) return undefined
        throw error
      }).finally(() => (state.onSearch = undefined))
    }
    // Nothing starts after reset(), whatever the early solve gave.
    if (signal.aborted) throw abortedError()
    // Each step of the flow reports its status before it asks the service anything: the removal is checked there.
    const result = await executeWith({
      ...optionsOf(form),
      signal,
      // No text for `error`: the failure's own sentence follows, and a status line emptied just
      // before it would be announced twice by screen readers.
      onStatus: (status) => {
        abortIfRemoved()
        if (status !== 'error') onStatus(status)
      },
    }, presolved, onSearch)
    tokenFieldOf(form).value = result.token
    dispatch(form, 'tollgate:verified', result)
    // A tollgate:verified listener called reset(), or the form is gone: the page does not want the submit.
    abortIfRemoved()
    if (signal.aborted) return
    // requestSubmit (and a click) fires the submit event synchronously; the mark is cleared whatever the page does with it.
    const marked: MarkedForm = form
    marked[PASSING] = true
    hold(false)
    try {
      const ownSubmitter = submitter !== null && 'form' in submitter && submitter.form === form ? submitter : null
      const formMethods = HTMLFormElement.prototype
      if ('requestSubmit' in formMethods) formMethods.requestSubmit.call(form, ownSubmitter)
      else {
        // Safari before 16: a submit button's click submits as requestSubmit does (the submit
        // event, the button's name and value), so the form's own button, or a hidden one.
        const button = ownSubmitter ?? document.createElement('button')
        if (button !== ownSubmitter) {
          button.hidden = true
          appendTo(form, button)
        }
        button.click()
        if (button !== ownSubmitter) button.remove()
      }
    } finally {
      marked[PASSING] = false
    }
  } catch (error) {
    const typed = error instanceof TollgateError ? error : new TollgateError('invalid_response', String(error))
    if (typed.code === 'aborted') show(form, () => '', 'en')
    else {
      console.warn(`Tollgate: ${typed.code}: ${typed.message}`)
      show(form, (strings) => messageFor(typed.code, typed.reference, strings))
      if (typed.code === 'network_error') retryWhenOnline(form, state, submitter)
    }
    dispatch(form, 'tollgate:error', typed)
  } finally {
    clearTimeout(slow)
    hold(false)
  }
}

/**
 * A form that could not reach the service because the browser was offline (the phone lost its
 * connection mid-solve) is submitted again when the browser is back online within ONLINE_RETRY_MS,
 * unless it was submitted, reset or removed since: the visitor asked for the submit and need not
 * press again. A failure while online (the service down or slow) is not retried: a later `online`
 * event says nothing about the service, and the visitor may have left the form long ago.
 */
function retryWhenOnline(form: HTMLFormElement, state: FormState, submitter: HTMLElement | null): void {
  if (navigator.onLine) return
  state.offline = true
  const failedAt = Date.now()
  addEventListener('online', () => state.offline && Date.now() - failedAt < ONLINE_RETRY_MS && states.get(form) === state && isConnected(form) && start(form, state, submitter), { once: true })
}

function onSubmit(event: Event): void {
  const form = formOf(event)
  if (form === undefined) return
  if ((form as MarkedForm)[PASSING] === true) return
  const state = stateOf(form)
  // Capture phase on the document: this runs before the site's own submit handlers, which then
  // see the filled token when the SDK re-submits.
  event.preventDefault()
  event.stopImmediatePropagation()
  // Safari before 15 has no SubmitEvent: its submit events name no submitter.
  start(form, state, (event as Partial<SubmitEvent>).submitter ?? null)
}

function start(form: HTMLFormElement, state: FormState, submitter: HTMLElement | null): void {
  if (state.busy) return
  state.busy = true
  state.offline = false
  prepare(form)
  void track((controller) => verifyAndSubmit(form, state, submitter, controller), form).finally(() => {
    state.busy = false
  })
}

function onInteraction(event: Event): void {
  const form = formOf(event)
  if (form === undefined) return
  // A form added after the load gets its live region now, before any text: screen readers
  // announce changes only in a region that was already there.
  prepare(form)
  presolve(form)
}

function readPageStrings(): void {
  const block = document.querySelector('script[type="application/json"][data-tollgate-strings]')
  if (block?.textContent == null) return
  try {
    setStrings(JSON.parse(block.textContent) as Partial<TollgateStrings>)
  } catch {
    console.error('Tollgate: data-tollgate-strings is not JSON')
  }
}

function formsIn(root: Root | Element): HTMLFormElement[] {
  return Array.from(root.querySelectorAll<HTMLFormElement>(FORM_SELECTOR))
}

function prepareAll(): void {
  readPageStrings()
  formsIn(document).filter(claim).forEach(prepare)
}

/** reset(): every form's state, token and text, or those of the forms in `target` (or of that form). */
function clearAll(target?: ResetTarget): void {
  if (!target) states = new WeakMap()
  const roots = target ? [target] : [document, ...shadowRoots.map((ref) => ref.deref()).filter((root) => root !== undefined)]
  for (const form of target instanceof HTMLFormElement ? [target] : roots.flatMap(formsIn)) {
    states.delete(form)
    tokenFieldOf(form).value = ''
    show(form, () => '', 'en')
  }
}

/** Listens on `root` for submits and first touches; the first root bound also joins reset(). */
function listenOn(root: Root): void {
  if (bound === undefined && shadowRoots.length === 0) onReset(clearAll)
  root.addEventListener('submit', onSubmit, true)
  root.addEventListener('focusin', onInteraction, true)
  root.addEventListener('pointerdown', onInteraction, true)
}

/**
 * The options given, without those left undefined: a later call (or the script tag's own, whose
 * data attributes may be absent) must not wipe what an earlier one set.
 */
function given(options: Omit<BindOptions, 'root'>): BindOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined))
}

/**
 * Binds every current and future `form[data-tollgate]` of the document; calling it again only
 * updates the options it names, so `bindForms({ fieldName })` on a page keeps the script tag's
 * site key. With `root`, binds the forms of that shadow root instead (once per root; again, it
 * updates that root's options the same way).
 */
export function bindForms(options: BindOptions = {}): void {
  const { root, ...rest } = options
  if (root !== undefined) {
    const first = !rootOptions.has(root)
    rootOptions.set(root, { ...rootOptions.get(root), ...given(rest) })
    if (!first) return
    listenOn(root)
    shadowRoots.push(new WeakRef(root))
    formsIn(root).filter(claim).forEach(prepare)
    return
  }
  const first = bound === undefined
  if (first) listenOn(document)
  bound = { ...bound, ...given(rest) }
  if (!first) return
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', prepareAll, { once: true })
  else prepareAll()
}
