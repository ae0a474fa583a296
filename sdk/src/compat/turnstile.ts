import type { TollgateError } from '../errors.js'
import { callbackOf, paramsFor, renderImplicitly, textOf, whenParsed, WidgetRegistry, type RenderParams, type VendorApi } from './page-api.js'
import { Widget, type WidgetOptions } from './widget.js'

/**
 * `window.turnstile` as Cloudflare's api.js defines it: render, execute, reset, remove,
 * getResponse, isExpired, ready, and the implicit rendering of `.cf-turnstile` elements with
 * their data-* attributes (data-sitekey, data-action, data-cdata, data-callback,
 * data-expired-callback, data-error-callback, data-execution, data-response-field,
 * data-response-field-name, data-refresh-expired). Appearance parameters are taken and have no
 * effect: there is nothing to see but a status line.
 */
export interface TurnstileApi {
  render(container: string | HTMLElement, params?: RenderParams): string | undefined
  execute(container?: string | HTMLElement, params?: RenderParams): void
  reset(widget?: string | HTMLElement): void
  remove(widget?: string | HTMLElement): void
  getResponse(widget?: string | HTMLElement): string | undefined
  isExpired(widget?: string | HTMLElement): boolean
  ready(callback: () => void): void
}

const FIELD_NAME = 'cf-turnstile-response'

/**
 * Turnstile's error codes are strings of six digits whose first three name the family (its
 * documentation's table): a page's error callback may branch on them. The TollgateError comes
 * second, for pages that want Tollgate's own code.
 */
function turnstileCodeOf(error: TollgateError): string {
  switch (error.code) {
    case 'invalid_site_key': return '110100'
    case 'origin_not_allowed': return '110200'
    case 'invalid_options': return '110420'
    case 'worker_unavailable': return '110500'
    case 'timeout': return '110600'
    case 'blocked':
    case 'challenge_failed': return '600010'
    default: return '300010'
  }
}

/** Turnstile's `refresh-expired` (`auto` unless the page says `manual` or `never`). */
function refreshExpiredOf(value: string | undefined): WidgetOptions['refreshExpired'] {
  return value === 'manual' || value === 'never' ? value : 'auto'
}

export function createTurnstile(): VendorApi<TurnstileApi> {
  const registry = new WidgetRegistry<string>(true)
  let count = 0
  const api: TurnstileApi = {
    render(container, params) {
      const element = typeof container === 'string' ? document.querySelector<HTMLElement>(container) : container
      if (!(element instanceof HTMLElement)) {
        console.warn('Tollgate (turnstile.render): no container')
        return undefined
      }
      const rendered = registry.idOf(element)
      if (rendered !== undefined) {
        console.warn('Tollgate (turnstile.render): container already rendered')
        return rendered
      }
      const merged = paramsFor(element, params)
      const siteKey = textOf(merged, 'sitekey')
      if (siteKey === undefined) {
        console.warn('Tollgate (turnstile.render): no sitekey')
        return undefined
      }
      const onError = callbackOf<[string, TollgateError]>(merged['error-callback'])
      const responseField = merged['response-field']
      const widget = new Widget(element, {
        siteKey,
        action: textOf(merged, 'action'),
        cData: textOf(merged, 'cData', 'cdata'),
        language: textOf(merged, 'language'),
        fields: responseField === false || responseField === 'false' ? [] : [{ name: textOf(merged, 'response-field-name') ?? FIELD_NAME, tag: 'input' }],
        onToken: callbackOf<[string]>(merged.callback),
        onExpired: callbackOf<[string]>(merged['expired-callback']),
        onError: onError === undefined ? undefined : (error: TollgateError) => onError(turnstileCodeOf(error), error),
        refreshExpired: refreshExpiredOf(textOf(merged, 'refresh-expired')),
        retriesFailures: textOf(merged, 'retry') !== 'never',
        startsBySelf: textOf(merged, 'execution') !== 'execute',
        runsOnClick: false,
      })
      count += 1
      return registry.add(`tollgate-turnstile-${count}`, widget)
    },
    execute(container, params) {
      const widget = registry.find(container)
      if (widget !== undefined) widget.start()
      else if (container !== undefined) api.render(container, { ...params, execution: 'render' })
    },
    reset: (widget) => registry.find(widget)?.reset(),
    remove: (widget) => registry.remove(widget),
    getResponse: (widget) => registry.find(widget)?.token || undefined,
    isExpired: (widget) => registry.find(widget)?.isExpired() ?? false,
    ready: whenParsed,
  }
  return { api, renderAll: () => renderImplicitly('.cf-turnstile', registry, (element) => api.render(element)) }
}
