import type { BrowserEvidence } from '../../../src/domain/automation/assess-browser.js'
import { readBehavior, readFingerprint } from '../../../src/domain/automation/browser-report.js'

export const chromeUserAgent = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36'
export const firefoxUserAgent = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:141.0) Gecko/20100101 Firefox/141.0'
export const iphoneUserAgent = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1'
export const headlessUserAgent = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36'

/** The headers Chrome on Windows sends with the SDK's fetch to an HTTPS service. */
export const chromeHeaders = {
  'user-agent': chromeUserAgent,
  'accept-language': 'en-GB,en;q=0.9',
  'sec-fetch-mode': 'cors',
  'sec-fetch-site': 'cross-site',
  'sec-fetch-dest': 'empty',
  'sec-ch-ua': '"Chromium";v="140", "Not=A?Brand";v="24", "Google Chrome";v="140"',
  'sec-ch-ua-mobile': '?0',
  'sec-ch-ua-platform': '"Windows"',
}

/** What the SDK collects in that browser (sdk/src/signals/fingerprint.ts). */
export const chromeFingerprint = {
  canvas: '8f2a0c7e51b94d3e6a1f0b2c9d8e7f60',
  webgl: '1b2c3d4e5f60718293a4b5c6d7e8f901',
  webglSoftware: false,
  webdriver: false,
  headlessUserAgent: false,
  automationMarkers: 0,
  patchedNatives: 0,
  pluginsLength: 5,
  languagesLength: 2,
  language: 'en-GB',
  hardwareConcurrency: 8,
  deviceMemory: 8,
  maxTouchPoints: 0,
  screenWidth: 1920,
  screenHeight: 1080,
  colorDepth: 24,
  outerWidth: 1280,
  outerHeight: 900,
  timezone: 'Europe/London',
  timezoneOffset: 0,
  platform: 'Win32',
  userAgentBrands: 'Chromium;Not=A?Brand;Google Chrome',
}

/** A person who moved the mouse and typed into the form (sdk/src/signals/behavior.ts). */
export const personBehavior = {
  mouseMovements: 143,
  keystrokes: 31,
  clicks: 3,
  scrolls: 2,
  touches: 0,
  focusChanges: 4,
  untrustedEvents: 0,
  timeOnPageMs: 14_200,
  firstInteractionMs: 900,
  mouseIntervalMeanMs: 41,
  mouseIntervalStdMs: 96,
  keyIntervalMeanMs: 180,
  keyIntervalStdMs: 120,
}

export interface EvidenceChanges {
  headers?: Record<string, string | undefined>
  fingerprint?: Record<string, unknown>
  behavior?: Record<string, unknown>
  isTrustworthyDestination?: boolean
  isSecurePage?: boolean
  /** Replace the whole object instead of merging changes into the person's. */
  replaceFingerprint?: boolean
  replaceBehavior?: boolean
}

/** A person's evidence with some values changed; `undefined` removes a header. */
export function evidenceWith(changes: EvidenceChanges = {}): BrowserEvidence {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries({ ...chromeHeaders, ...changes.headers })) if (value !== undefined) headers[name] = value
  const fingerprint = changes.replaceFingerprint === true ? changes.fingerprint ?? {} : { ...chromeFingerprint, ...changes.fingerprint }
  const behavior = changes.replaceBehavior === true ? changes.behavior ?? {} : { ...personBehavior, ...changes.behavior }
  return {
    headers,
    fingerprint: readFingerprint(fingerprint),
    behavior: readBehavior(behavior),
    isTrustworthyDestination: changes.isTrustworthyDestination ?? true,
    isSecurePage: changes.isSecurePage ?? true,
  }
}
