import { TollgateError } from '../errors.js'
import { bareCallbackOf, callbackOf, renderImplicitly, renderTargetOf, startOf, textOf, WidgetRegistry, type RenderParams, type VendorApi } from './page-api.js'
import { Widget } from './widget.js'

/** hCaptcha's execute options: with `async`, a promise of the token instead of the callback. */
export interface HcaptchaExecuteOptions {
  async?: boolean
}

/**
 * `window.hcaptcha` as hCaptcha's api.js defines it: `render(container, params)` (a widget id),
 * `execute(widgetId, { async: true })` or, for the first widget, `execute({ async: true })` (a
 * promise of `{ response, key }`; without `async`, the token goes to the callback),
 * `getResponse`, `getRespKey`, `reset`, `remove`, `close` and `setData` (taken, ignored), and the implicit rendering of `.h-captcha`
 * elements (data-sitekey, data-callback, data-expired-callback, data-error-callback, data-size).
 * A widget fills the hidden textareas `h-captcha-response` and, as hCaptcha does unless
 * `recaptchacompat=off`, `g-recaptcha-response`.
 */
export interface HcaptchaApi {
  render(container: string | HTMLElement, params?: RenderParams): string
  execute(widget?: string | HcaptchaExecuteOptions, options?: HcaptchaExecuteOptions): Promise<{ response: string; key: string }> | undefined
  getResponse(widget?: string): string
  getRespKey(widget?: string): string
  reset(widget?: string): void
  remove(widget?: string): void
  close(widget?: string): void
  /** hCaptcha Enterprise's rqdata for the next run: taken and ignored, as Tollgate has no use for it. */
  setData(widget?: string, data?: object): void
}

const REFUSALS = { container: '[hCaptcha] render: invalid container', siteKey: '[hCaptcha] render: missing sitekey' }

/** hCaptcha's error codes, which its error callback and async execute's rejection carry (the TollgateError comes second to the callback). */
function hcaptchaCodeOf(error: TollgateError): string {
  switch (error.code) {
    case 'network_error': return 'network-error'
    case 'rate_limited': return 'rate-limited'
    case 'timeout': return 'challenge-expired'
    case 'server_error':
    case 'invalid_response': return 'internal-error'
    case 'invalid_site_key':
    case 'origin_not_allowed':
    case 'invalid_options': return 'invalid-data'
    default: return 'challenge-error'
  }
}

export function createHcaptcha(fillsRecaptchaField: boolean): VendorApi<HcaptchaApi> {
  const registry = new WidgetRegistry<string>()
  let count = 0
  const api: HcaptchaApi = {
    render(container, params) {
      const { element, params: merged, siteKey } = renderTargetOf(container, params, REFUSALS)
      if (registry.idOf(element) !== undefined) throw new Error('[hCaptcha] render: container already rendered')
      count += 1
      const id = `tollgate-hcaptcha-${count}`
      const onError = callbackOf<[string, TollgateError]>(merged['error-callback'])
      const widget = new Widget(element, {
        siteKey,
        language: textOf(merged, 'hl'),
        fields: [
          { name: 'h-captcha-response', tag: 'textarea', id: `h-captcha-response-${id}` },
          ...fillsRecaptchaField ? [{ name: 'g-recaptcha-response', tag: 'textarea' as const, id: `g-recaptcha-response-${id}` }] : [],
        ],
        onToken: callbackOf<[string]>(merged.callback),
        onExpired: bareCallbackOf(merged['expired-callback']),
        onError: onError === undefined ? undefined : (error: TollgateError) => onError(hcaptchaCodeOf(error), error),
        refreshExpired: 'manual',
        retriesFailures: false,
        ...startOf(element, merged),
      })
      return registry.add(id, widget)
    },
    execute(reference, givenOptions) {
      // The widget id is optional before the options too (`hcaptcha.execute({ async: true })`, the first widget).
      const isOptionsFirst = typeof reference === 'object' && reference !== null && !(reference instanceof Element)
      const id = isOptionsFirst ? undefined : reference
      const options = isOptionsFirst ? reference : givenOptions
      const widget = registry.find(id)
      if (options?.async !== true) {
        widget?.start()
        return undefined
      }
      if (widget === undefined) return Promise.reject(new TollgateError('invalid_options', 'No hCaptcha widget to execute.'))
      return widget.execute().then(
        (response) => ({ response, key: '' }),
        // hCaptcha's promise rejects with its error code, a string, and pages compare it so.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        (error: TollgateError) => Promise.reject(hcaptchaCodeOf(error)),
      )
    },
    getResponse: (id) => registry.find(id)?.token ?? '',
    getRespKey: () => '',
    reset: (id) => registry.find(id)?.reset(),
    remove: (id) => registry.remove(id),
    close: () => undefined,
    setData: () => undefined,
  }
  return { api, renderAll: () => renderImplicitly('.h-captcha', registry, (element) => api.render(element)) }
}
