/**
 * The module build (`tollgate.mjs`) for sites that bundle the SDK. The script-tag build
 * (browser-entry.ts) exposes the same functions as `window.Tollgate`.
 * A bundle may be imported on the server too (server-side rendering): importing it is safe there,
 * bindForms does nothing and execute rejects, saying why. Those checks live here, not in the
 * functions themselves, because the script-tag build only ever runs in a browser and every byte
 * of it is loaded by each visitor.
 */
import { startBehaviorCollection } from './signals/behavior.js'
import { collectFingerprint } from './signals/fingerprint.js'
import { bindForms as bindFormsInBrowser, type BindOptions } from './declarative.js'
import { TollgateError } from './errors.js'
import { execute as executeInBrowser } from './execute.js'
import type { ExecuteOptions, ExecuteResult } from './types.js'

export { type BindOptions } from './declarative.js'
export { TollgateError, type TollgateErrorCode } from './errors.js'
export { reset } from './execute.js'
export { setStrings, type TollgateStrings } from './strings.js'
export type { ExecuteOptions, ExecuteResult, TollgateAction, TollgateStatus } from './types.js'
export const version = '1.0.0'

/** Without a document (a server rendering a 'use client' module that calls it at its top level) it does nothing. */
export function bindForms(options?: BindOptions): void {
  if (typeof document !== 'undefined') bindFormsInBrowser(options)
}

/** Without a document it rejects with `invalid_options`: a token is for the visitor's browser, at submit. */
export function execute(options: ExecuteOptions): Promise<ExecuteResult> {
  if (typeof document === 'undefined') {
    return Promise.reject(new TollgateError('invalid_options', 'Tollgate runs only in a browser.'))
  }
  return executeInBrowser(options)
}

if (typeof window !== 'undefined') {
  startBehaviorCollection()
  void collectFingerprint()
}
