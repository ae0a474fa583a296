import { isButton, type Widget, type WidgetOptions } from './widget.js'

/** A vendor's API, and the rendering of the vendor's elements found in the page (unless the script says `render=explicit`). */
export interface VendorApi<Api> {
  api: Api
  renderAll: () => void
}

/**
 * Whether a global of a vendor's name is the vendor's own API (its script, still loaded), which a
 * page keeps: not the queue of Google's asynchronous loading snippet (no `render`), nor an element
 * that the browser made a global by its id (`<div id="hcaptcha">`).
 */
export function isVendorApi(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !(value instanceof Element) && typeof (value as { render?: unknown }).render === 'function'
}

/** A vendor's render parameters: the page's object, over the container's data-* attributes. */
export type RenderParams = Record<string, unknown>

/**
 * A page's callback as the vendors take it: a function, or the name of a global function, looked
 * up when it is called (a page may define it after the widget was rendered).
 */
export function callbackOf<Args extends unknown[]>(value: unknown): ((...args: Args) => void) | undefined {
  if (typeof value === 'function') return value as (...args: Args) => void
  if (typeof value !== 'string' || value === '') return undefined
  return (...args) => {
    const found = (window as unknown as Record<string, unknown>)[value]
    if (typeof found === 'function') (found as (...args: Args) => void)(...args)
    else console.warn(`Tollgate: the callback "${value}" is not a function of the page`)
  }
}

/**
 * A page's callback that the vendor's script calls with nothing (reCAPTCHA's error and expired
 * callbacks, hCaptcha's expired one): a page may hand one function to several of them
 * (`function onCaptcha(token) { submit.disabled = !token }`), and an expired token given there
 * would pass for a live one.
 */
export function bareCallbackOf(value: unknown): (() => void) | undefined {
  const callback = callbackOf<[]>(value)
  return callback && (() => callback())
}

/** The container as the vendors take it: an element, an element's id, or (Turnstile) a CSS selector. */
export function elementOf(container: unknown): HTMLElement | undefined {
  if (container instanceof HTMLElement) return container
  if (typeof container !== 'string' || container === '') return undefined
  const byId = document.getElementById(container)
  if (byId !== null) return byId
  try {
    return document.querySelector<HTMLElement>(container) ?? undefined
  } catch {
    return undefined
  }
}

/** The container's data-* attributes by their names without the prefix (`data-expired-callback` as `expired-callback`). */
function dataParamsOf(element: HTMLElement): RenderParams {
  const params: RenderParams = {}
  for (const attribute of Array.from(element.attributes)) {
    if (attribute.name.startsWith('data-')) params[attribute.name.slice(5)] = attribute.value
  }
  return params
}

/** The parameters of a render: the page's object wins over the container's attributes. */
export function paramsFor(element: HTMLElement, params: unknown): RenderParams {
  return { ...dataParamsOf(element), ...(typeof params === 'object' && params !== null ? params : {}) }
}

/** A text parameter, or undefined (an attribute's value, or the page's string). */
export function textOf(params: RenderParams, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = params[name]
    if (typeof value === 'string' && value !== '') return value
  }
  return undefined
}

/** What reCAPTCHA's and hCaptcha's render take: the container (an element or its id), its parameters and site key. */
export interface RenderTarget {
  element: HTMLElement
  params: RenderParams
  siteKey: string
}

/** The target of a render as reCAPTCHA and hCaptcha read it, or their error thrown (their messages). */
export function renderTargetOf(container: unknown, params: unknown, refusals: { container: string; siteKey: string }): RenderTarget {
  const element = typeof container === 'string' ? document.getElementById(container) : container
  if (!(element instanceof HTMLElement)) throw new Error(refusals.container)
  const merged = paramsFor(element, params)
  const siteKey = textOf(merged, 'sitekey')
  if (siteKey === undefined) throw new Error(refusals.siteKey)
  return { element, params: merged, siteKey }
}

/**
 * How a reCAPTCHA or hCaptcha widget starts: bound to a button (Google's and hCaptcha's invisible
 * markup, with or without `data-size="invisible"`), when it is clicked; an invisible one
 * elsewhere, when the page executes it; a checkbox at once (there is no box to tick).
 */
export function startOf(element: HTMLElement, params: RenderParams): Pick<WidgetOptions, 'startsBySelf' | 'runsOnClick'> {
  const onButton = isButton(element)
  return { runsOnClick: onButton, startsBySelf: !onButton && textOf(params, 'size') !== 'invisible' }
}

/**
 * A vendor's widgets by id. Its methods take the id `render` returned, or the container, or none:
 * then the first widget rendered (reCAPTCHA, hCaptcha) or the last (Turnstile).
 */
export class WidgetRegistry<Id extends string | number> {
  private readonly widgets = new Map<Id, Widget>()

  constructor(private readonly defaultsToLast = false) {}

  add(id: Id, widget: Widget): Id {
    this.widgets.set(id, widget)
    return id
  }

  find(reference?: unknown): Widget | undefined {
    if (reference === undefined || reference === null || reference === '') {
      return this.defaultsToLast ? [...this.widgets.values()].at(-1) : this.widgets.values().next().value
    }
    const byId = this.widgets.get(reference as Id)
    if (byId !== undefined) return byId
    const element = elementOf(reference)
    return element === undefined ? undefined : [...this.widgets.values()].find((widget) => widget.container === element)
  }

  remove(reference?: unknown): void {
    const widget = this.find(reference)
    if (widget === undefined) return
    widget.remove()
    for (const [id, each] of this.widgets) if (each === widget) this.widgets.delete(id)
  }

  /** The id of the element's widget, when it has one that was not removed. */
  idOf(element: HTMLElement): Id | undefined {
    for (const [id, widget] of this.widgets) if (widget.container === element && !widget.isRemoved) return id
    return undefined
  }
}

/** Runs `callback` once the document is parsed, and never before this script's own run has ended (as the vendors' scripts call back). */
export function whenParsed(callback: () => void): void {
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => callback(), { once: true })
  else setTimeout(callback, 0)
}

/**
 * Renders every element of `selector` that has no widget yet. A render that throws (an element
 * without a site key) is reported and the others go on, as the API does.
 */
export function renderImplicitly(selector: string, registry: WidgetRegistry<string | number>, render: (element: HTMLElement) => unknown): void {
  for (const element of Array.from(document.querySelectorAll<HTMLElement>(selector))) {
    if (registry.idOf(element) !== undefined) continue
    try {
      render(element)
    } catch (error) {
      console.error(error)
    }
  }
}

/** Calls the page's function named by the script's `onload` parameter, as the vendors' scripts do. */
export function callOnload(name: string | null): void {
  if (name !== null && name !== '') callbackOf<[]>(name)?.()
}
