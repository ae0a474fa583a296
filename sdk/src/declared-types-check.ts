/**
 * Compile-time only (never bundled): fails `tsc -p sdk` when the hand-written sdk/tollgate.d.ts
 * drifts from the sources.
 */
import type * as Declared from '../tollgate.js'
import type * as Implemented from './index.js'

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

export const declaredTypesMatch: [
  Same<Declared.ExecuteOptions, Implemented.ExecuteOptions>,
  Same<Declared.ExecuteResult, Implemented.ExecuteResult>,
  Same<Declared.TollgateErrorCode, Implemented.TollgateErrorCode>,
  Same<Declared.TollgateStrings, Implemented.TollgateStrings>,
  Same<Declared.BindOptions, Implemented.BindOptions>,
  Same<Declared.TollgateStatus, Implemented.TollgateStatus>,
  Same<typeof Declared.execute, typeof Implemented.execute>,
  Same<typeof Declared.reset, typeof Implemented.reset>,
  // Optional parameters pass the line above either way: reset(target?) is compared by its parameters.
  Same<Parameters<typeof Declared.reset>, Parameters<typeof Implemented.reset>>,
  Same<typeof Declared.setStrings, typeof Implemented.setStrings>,
  Same<typeof Declared.bindForms, typeof Implemented.bindForms>,
  Same<InstanceType<typeof Declared.TollgateError>['code'], InstanceType<typeof Implemented.TollgateError>['code']>,
] = [true, true, true, true, true, true, true, true, true, true, true, true]

/** The README's listeners on the document type-check, with each event's detail (never called). */
export function listensOnTheDocument(): void {
  document.addEventListener('tollgate:error', (event) => void event.detail.code)
  document.addEventListener('tollgate:verified', (event) => void event.detail.token)
  document.addEventListener('tollgate:ready', (event) => void event.detail)
}

type VendorPageGlobal = Pick<typeof Implemented, 'execute' | 'reset' | 'setStrings' | 'TollgateError' | 'version'>

/**
 * window.Tollgate is typed for both kinds of page: the vendor-compatible scripts' global (no
 * bindForms, compat-entry.ts) fits it, bindForms may be absent, and TollgateApi (tollgate.js's
 * global) still has it.
 */
export const windowTollgateIsTruthful: [
  [VendorPageGlobal] extends [Window['Tollgate']] ? true : false,
  undefined extends Window['Tollgate']['bindForms'] ? true : false,
  Same<Declared.TollgateApi['bindForms'], typeof Implemented.bindForms>,
  Same<Declared.TollgateCompatApi, Omit<Window['Tollgate'], 'bindForms'>>,
] = [true, true, true, true]

/** The README's wait for the global (section 2) and its bindForms on a tollgate.js page type-check (never called). */
export async function waitsForTheGlobal(): Promise<void> {
  const whenTollgate = window.Tollgate
    ? Promise.resolve(window.Tollgate)
    : new Promise<Window['Tollgate']>((resolve, reject) => {
      document.addEventListener('tollgate:ready', () => resolve(window.Tollgate), { once: true })
      setTimeout(() => reject(new Error('the Tollgate script did not load')), 10_000)
    })
  const Tollgate = await whenTollgate
  const { token } = await Tollgate.execute({ siteKey: 'tgk_...' })
  void token
  // @ts-expect-error bindForms is absent on the vendors' pages: a page says it loads tollgate.js
  window.Tollgate.bindForms({ fieldName: 'cf-turnstile-response' })
  ;(window.Tollgate as Declared.TollgateApi).bindForms({ fieldName: 'cf-turnstile-response' })
}
