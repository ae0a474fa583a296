import { TollgateError } from '../errors.js'
import { execute } from '../execute.js'
import { bareCallbackOf, callbackOf, renderImplicitly, renderTargetOf, startOf, textOf, whenParsed, WidgetRegistry, type RenderParams, type VendorApi } from './page-api.js'
import { Widget } from './widget.js'
import { BLOCKED_RESPONSE_PREFIX } from './blocked-response.js'

/**
 * `window.grecaptcha` (and `grecaptcha.enterprise`) as Google's api.js defines it. Version 3:
 * `ready(callback)` and `execute(siteKey, { action })`, a promise of a fresh token (for a visitor
 * turned away, a string that fails Siteverify: blocked-response.ts). Version 2:
 * `render(container, params)` (a number, 0 for the first widget; `hl` names its language),
 * `execute(widgetId)` (and version 3's `execute(widgetId, { action })`, that run's action),
 * `getResponse(widgetId)`, `reset(widgetId)`, and the implicit rendering of `.g-recaptcha`
 * elements (data-sitekey, data-callback, data-expired-callback, data-error-callback, data-size,
 * data-action, data-hl). A widget fills a hidden textarea `g-recaptcha-response`. A checkbox widget gets
 * its token as soon as it is rendered (there is no box to tick); an invisible one
 * (`size: 'invisible'`) when the page calls execute, or when its button is clicked.
 */
export interface RecaptchaApi {
  ready(callback: () => void): void
  execute(siteKeyOrWidget?: string | number, options?: { action?: string }): Promise<string>
  render(container: string | HTMLElement, params?: RenderParams): number
  getResponse(widget?: number): string
  reset(widget?: number): void
  enterprise?: RecaptchaApi
}

const FIELD_NAME = 'g-recaptcha-response'
const REFUSALS = { container: 'reCAPTCHA placeholder element must be an element or id', siteKey: 'Missing required parameters: sitekey' }

/**
 * The queue a page fills before the script has loaded, as Google documents for loading it
 * asynchronously (`window.___grecaptcha_cfg.fns`): its callbacks run once the API is there.
 */
function runQueuedReadyCallbacks(): void {
  const queued = (window as { ___grecaptcha_cfg?: { fns?: unknown } }).___grecaptcha_cfg?.fns
  if (!Array.isArray(queued)) return
  for (const callback of queued.splice(0)) if (typeof callback === 'function') whenParsed(callback as () => void)
}

export function createRecaptcha(): VendorApi<RecaptchaApi> {
  const registry = new WidgetRegistry<number>()
  let count = 0
  const api: RecaptchaApi = {
    ready: whenParsed,
    execute(siteKeyOrWidget, options) {
      if (typeof siteKeyOrWidget === 'string') {
        return execute({ siteKey: siteKeyOrWidget, action: options?.action }).then(
          (result) => result.token,
          // Google's gives a blocked visitor a token too, and the page posts its form: the backend refuses it.
          (error: unknown) => {
            if (error instanceof TollgateError && (error.code === 'blocked' || error.code === 'challenge_failed')) return BLOCKED_RESPONSE_PREFIX + (error.reference ?? '')
            throw error
          },
        )
      }
      const widget = registry.find(siteKeyOrWidget)
      if (widget === undefined) return Promise.reject(new TollgateError('invalid_options', 'No reCAPTCHA widget to execute.'))
      // Google documents execute(widgetId, { action }) for version 3's explicit rendering: this run's action.
      const token = widget.execute(options?.action)
      // A version 2 page listens through its callbacks and leaves the promise alone.
      token.catch(() => undefined)
      return token
    },
    render(container, params) {
      const { element, params: merged, siteKey } = renderTargetOf(container, params, REFUSALS)
      if (registry.idOf(element) !== undefined) throw new Error('reCAPTCHA has already been rendered in this element')
      const id = count
      count += 1
      const widget = new Widget(element, {
        siteKey,
        action: textOf(merged, 'action'),
        language: textOf(merged, 'hl'),
        fields: [{ name: FIELD_NAME, tag: 'textarea', id: id === 0 ? FIELD_NAME : `${FIELD_NAME}-${id}` }],
        onToken: callbackOf<[string]>(merged.callback),
        onExpired: bareCallbackOf(merged['expired-callback']),
        onError: bareCallbackOf(merged['error-callback']),
        refreshExpired: 'manual',
        retriesFailures: false,
        ...startOf(element, merged),
      })
      return registry.add(id, widget)
    },
    getResponse: (widget) => registry.find(widget)?.token ?? '',
    reset: (widget) => registry.find(widget)?.reset(),
  }
  api.enterprise = api
  runQueuedReadyCallbacks()
  return { api, renderAll: () => renderImplicitly('.g-recaptcha', registry, (element) => api.render(element)) }
}
