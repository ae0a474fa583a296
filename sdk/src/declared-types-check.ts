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
  Same<typeof Declared.setStrings, typeof Implemented.setStrings>,
  Same<typeof Declared.bindForms, typeof Implemented.bindForms>,
  Same<InstanceType<typeof Declared.TollgateError>['code'], InstanceType<typeof Implemented.TollgateError>['code']>,
] = [true, true, true, true, true, true, true, true, true, true, true]

/** The README's listeners on the document type-check, with each event's detail (never called). */
export function listensOnTheDocument(): void {
  document.addEventListener('tollgate:error', (event) => void event.detail.code)
  document.addEventListener('tollgate:verified', (event) => void event.detail.token)
  document.addEventListener('tollgate:ready', (event) => void event.detail)
}
