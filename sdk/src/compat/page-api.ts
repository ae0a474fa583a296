import type { Widget } from './widget.js'

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
 * Starts a reCAPTCHA or hCaptcha widget as its size says: a checkbox at once (there is no box to
 * tick), an invisible one when the page executes it or, bound to a button, when the button is
 * clicked (the click is held; the page's callback, which gets the token, submits).
 */
export function startBySize(widget: Widget, params: RenderParams): void {
  if (textOf(params, 'size') !== 'invisible') return widget.start()
  const { container } = widget
  if (!(container instanceof HTMLButtonElement || container instanceof HTMLInputElement)) return
  container.addEventListener('click', (event) => {
    event.preventDefault()
    widget.start()
  })
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

  get size(): number {
    return this.widgets.size
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

  has(element: HTMLElement): boolean {
    return [...this.widgets.values()].some((widget) => widget.container === element)
  }
}

/** Renders every element of `selector` not rendered yet, once the document is parsed. */
export function renderImplicitly(selector: string, isRendered: (element: HTMLElement) => boolean, render: (element: HTMLElement) => void): void {
  const renderAll = () => {
    for (const element of Array.from(document.querySelectorAll<HTMLElement>(selector))) {
      if (!isRendered(element)) render(element)
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', renderAll, { once: true })
  else renderAll()
}

/** Calls the page's function named by the script's `onload` parameter, as the vendors' scripts do. */
export function callOnload(name: string | null): void {
  if (name !== null && name !== '') callbackOf<[]>(name)?.()
}
