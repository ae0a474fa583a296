/**
 * The SDK's fingerprint and behaviorData (sdk/src/signals), read defensively: the body schema
 * only requires two objects, so any field may be missing or of the wrong type when the submission
 * does not come from the SDK. A missing field is undefined, never a default that looks normal.
 */
export interface FingerprintReport {
  canvas: string | undefined
  webgl: string | undefined
  webglSoftware: boolean | undefined
  webdriver: boolean | undefined
  headlessUserAgent: boolean | undefined
  automationMarkers: number | undefined
  /** Natives found replaced by a script (sdk/src/signals/fingerprint.ts, countPatchedNatives). */
  patchedNatives: number | undefined
  pluginsLength: number | undefined
  languagesLength: number | undefined
  screenWidth: number | undefined
  screenHeight: number | undefined
  outerWidth: number | undefined
  outerHeight: number | undefined
  platform: string | undefined
  userAgentBrands: string | undefined
}

export interface BehaviorReport {
  mouseMovements: number | undefined
  keystrokes: number | undefined
  clicks: number | undefined
  scrolls: number | undefined
  touches: number | undefined
  focusChanges: number | undefined
  untrustedEvents: number | undefined
  mouseIntervalStdMs: number | undefined
  keyIntervalStdMs: number | undefined
}

type Loose = Readonly<Record<string, unknown>>

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
const flag = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : undefined)
const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined)

export function readFingerprint(fingerprint: Loose): FingerprintReport {
  return {
    canvas: text(fingerprint.canvas),
    webgl: text(fingerprint.webgl),
    webglSoftware: flag(fingerprint.webglSoftware),
    webdriver: flag(fingerprint.webdriver),
    headlessUserAgent: flag(fingerprint.headlessUserAgent),
    automationMarkers: count(fingerprint.automationMarkers),
    patchedNatives: count(fingerprint.patchedNatives),
    pluginsLength: count(fingerprint.pluginsLength),
    languagesLength: count(fingerprint.languagesLength),
    screenWidth: count(fingerprint.screenWidth),
    screenHeight: count(fingerprint.screenHeight),
    outerWidth: count(fingerprint.outerWidth),
    outerHeight: count(fingerprint.outerHeight),
    platform: text(fingerprint.platform),
    userAgentBrands: text(fingerprint.userAgentBrands),
  }
}

export function readBehavior(behavior: Loose): BehaviorReport {
  return {
    mouseMovements: count(behavior.mouseMovements),
    keystrokes: count(behavior.keystrokes),
    clicks: count(behavior.clicks),
    scrolls: count(behavior.scrolls),
    touches: count(behavior.touches),
    focusChanges: count(behavior.focusChanges),
    untrustedEvents: count(behavior.untrustedEvents),
    mouseIntervalStdMs: count(behavior.mouseIntervalStdMs),
    keyIntervalStdMs: count(behavior.keyIntervalStdMs),
  }
}
