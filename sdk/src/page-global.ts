import type { ResetTarget } from './execute.js'
import type { TollgateStrings } from './strings.js'

/** `window.Tollgate` as a copy of the SDK sets it: tollgate.js's, or compat.js's without bindForms. */
export interface PageTollgate {
  bindForms?: unknown
  reset: (target?: ResetTarget) => void
  setStrings: (strings: Partial<TollgateStrings>) => void
}

/**
 * The `window.Tollgate` of another copy of the SDK on the page, if there is one: not a page's
 * own global of that name, nor an element the browser made a global by its id (`<div id="Tollgate">`).
 */
export function otherCopy(): PageTollgate | undefined {
  const found = (window as { Tollgate?: { execute?: unknown } }).Tollgate
  return typeof found?.execute === 'function' ? found as PageTollgate : undefined
}

/**
 * `api`, whose reset() and setStrings() reach `other`'s copy too: tollgate.js and compat.js on
 * one page share one `window.Tollgate`, and each copy has its own forms, widgets and texts.
 */
export function joined<Api extends PageTollgate>(api: Api, other: PageTollgate): Api {
  return {
    ...api,
    reset: (target) => {
      api.reset(target)
      other.reset(target)
    },
    setStrings: (strings) => {
      api.setStrings(strings)
      other.setStrings(strings)
    },
  }
}
