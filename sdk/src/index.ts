/**
 * The module build (`tollgate.mjs`) for sites that bundle the SDK. The script-tag build
 * (browser-entry.ts) exposes the same functions as `window.Tollgate`.
 */
import { startBehaviorCollection } from './signals/behavior.js'
import { collectFingerprint } from './signals/fingerprint.js'

export { bindForms, type BindOptions } from './declarative.js'
export { TollgateError, type TollgateErrorCode } from './errors.js'
export { execute, reset } from './execute.js'
export { setStrings, type TollgateStrings } from './strings.js'
export type { ExecuteOptions, ExecuteResult, TollgateAction, TollgateStatus } from './types.js'
export const version = '1.0.0'

if (typeof window !== 'undefined') {
  startBehaviorCollection()
  void collectFingerprint()
}
