import type { AnomalyLabel } from '../risk/anomalies.js'
import type { BehaviorReport, FingerprintReport } from './browser-report.js'
import { isConstantCanvas } from './constant-canvas.js'
import {
  brandNamesOfHeader, brandNamesOfReport, doesHintPlatformContradict, doesHintVersionContradict, doesPlatformContradict, readUserAgent, type UserAgentClaims,
} from './user-agent.js'

type Headers = Readonly<Record<string, string | string[] | undefined>>

export interface BrowserEvidence {
  /** The request's headers, names in lower case (as Node gives them). */
  headers: Headers
  fingerprint: FingerprintReport
  behavior: BehaviorReport
  /**
   * Whether the request reached the service over a potentially trustworthy URL (HTTPS or a
   * loopback host): browsers send client hints (Sec-CH-UA) and fetch metadata (Sec-Fetch-*) only there.
   */
  isTrustworthyDestination: boolean
  /** Whether the page that ran the SDK is a secure context (https or loopback origin): navigator.userAgentData exists only there. */
  isSecurePage: boolean
}

function headerOf(headers: Headers, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

function areSameSets(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((item) => b.has(item))
}

/** Chromium sends Sec-CH-UA and navigator.userAgentData from version 89 on. */
const FIRST_VERSION_WITH_CLIENT_HINTS = 8900

/** The first versions that send fetch metadata (major * 100 + minor, as UserAgentClaims.version). */
const firstVersionWithFetchMetadata: Partial<Record<UserAgentClaims['engine'], number>> = {
  chromium: 7600,
  firefox: 9000,
  safari: 1604,
  'webkit-ios': 1604,
}

/**
 * Fetch metadata, which every current browser sends (Chrome 76+, Firefox 90+, Safari 16.4+), but
 * only to a potentially trustworthy URL: a service reached over plain http on a LAN or intranet
 * address gets none from any browser, so its absence there says nothing; nor does it from an
 * older browser (an iPhone that cannot go past iOS 15).
 * The User-Agent itself and Accept-Language are judged by header-signals.ts.
 */
function assessFetchMetadata(headers: Headers, isTrustworthyDestination: boolean, claims: UserAgentClaims): AnomalyLabel[] {
  if (!isTrustworthyDestination) return []
  const firstVersion = firstVersionWithFetchMetadata[claims.engine]
  if (firstVersion !== undefined && claims.version !== undefined && claims.version < firstVersion) return []
  return headerOf(headers, 'sec-fetch-mode') === undefined || headerOf(headers, 'sec-fetch-site') === undefined ? ['missing_fetch_metadata'] : []
}

/**
 * Whether the User-Agent, the client hints and what the page itself reported tell one story.
 * Each check only fires on a contradiction between two present values, or on an absence that the
 * claimed browser cannot produce (a Chromium browser without client hints where it must send them).
 */
function doesIdentityContradict(evidence: BrowserEvidence, userAgent: string, claims: UserAgentClaims): boolean {
  const { headers, fingerprint } = evidence
  if (fingerprint.platform !== undefined && doesPlatformContradict(claims, fingerprint.platform)) return true
  const hintBrands = headerOf(headers, 'sec-ch-ua')
  const hintPlatform = headerOf(headers, 'sec-ch-ua-platform')
  if (hintPlatform !== undefined && doesHintPlatformContradict(claims, hintPlatform)) return true
  if (claims.engine === 'firefox' || claims.engine === 'safari' || claims.engine === 'webkit-ios') {
    // These engines have no client hints at all: hints under their name are a spoofed User-Agent.
    if (hintBrands !== undefined || (fingerprint.userAgentBrands ?? '') !== '') return true
  }
  // Compared whenever both are present: a browser that sends client hints sends its real version in both.
  if (claims.engine === 'chromium' && hintBrands !== undefined && doesHintVersionContradict(userAgent, hintBrands)) return true
  // An Android WebView whose app changed the User-Agent sends no client hints, nor does a Chromium
  // before 89: their absence there says nothing.
  const sendsClientHints = !claims.isWebView && (claims.version === undefined || claims.version >= FIRST_VERSION_WITH_CLIENT_HINTS)
  if (claims.engine === 'chromium' && !/HeadlessChrome/.test(userAgent) && sendsClientHints) {
    if (evidence.isTrustworthyDestination && hintBrands === undefined) return true
    if (evidence.isSecurePage && fingerprint.userAgentBrands === '') return true
    if (hintBrands !== undefined && fingerprint.userAgentBrands !== undefined && fingerprint.userAgentBrands !== '') {
      if (!areSameSets(brandNamesOfHeader(hintBrands), brandNamesOfReport(fingerprint.userAgentBrands))) return true
    }
  }
  return false
}

/**
 * What a browser always has: languages and a screen of some size. Not a window of some size: a
 * real Chrome reports a 0 x 0 window for a page opened in a background tab until the tab is shown,
 * and so does a WebKit view inside an app that gives it no window frame.
 */
function hasHeadlessMarkers(fingerprint: FingerprintReport): boolean {
  return fingerprint.languagesLength === 0 || fingerprint.screenWidth === 0 || fingerprint.screenHeight === 0
}

/** Desktop Chrome and Firefox list their PDF viewer as plugins, unless set to download PDFs; mobile browsers list none. */
function lacksPlugins(fingerprint: FingerprintReport, claims: UserAgentClaims): boolean {
  const expectsPlugins = !claims.isMobile && (claims.engine === 'chromium' || claims.engine === 'firefox')
  return expectsPlugins && fingerprint.pluginsLength === 0
}

/** Fields the SDK sends on every submission, whatever the browser (sdk/src/signals/fingerprint.ts). */
const alwaysCollected = ['webdriver', 'pluginsLength', 'languagesLength', 'platform', 'screenWidth', 'outerWidth', 'userAgentBrands'] as const

/**
 * The SDK's automation fields. navigator.webdriver, missing and placeholder canvas or WebGL values
 * are judged by fingerprint-signals.ts; this adds what the SDK reports beyond the spec's keys.
 */
function assessFingerprint(evidence: BrowserEvidence, userAgent: string | undefined, claims: UserAgentClaims): AnomalyLabel[] {
  const { fingerprint, headers } = evidence
  const anomalies: AnomalyLabel[] = []
  if (fingerprint.headlessUserAgent === true || /headless/i.test(headerOf(headers, 'sec-ch-ua') ?? '')) anomalies.push('headless_user_agent')
  if ((fingerprint.automationMarkers ?? 0) > 0) anomalies.push('automation_markers')
  if ((fingerprint.patchedNatives ?? 0) > 0) anomalies.push('patched_natives')
  if (hasHeadlessMarkers(fingerprint)) anomalies.push('headless_detected')
  if (lacksPlugins(fingerprint, claims)) anomalies.push('no_plugins')
  if (fingerprint.webglSoftware === true) anomalies.push('webgl_software_renderer')
  if (alwaysCollected.some((field) => fingerprint[field] === undefined)) anomalies.push('incomplete_fingerprint')
  if (fingerprint.canvas !== undefined && fingerprint.canvas !== '' && isConstantCanvas(fingerprint.canvas)) anomalies.push('canvas_constant')
  if (userAgent !== undefined && claims.isBrowserLike && doesIdentityContradict(evidence, userAgent, claims)) {
    anomalies.push('user_agent_mismatch')
  }
  return anomalies
}

/** Fewer events than this make interval statistics meaningless. */
const MIN_EVENTS_FOR_RHYTHM = 20

/**
 * The SDK's input counters that only a person's input makes trusted. Each counts every event of
 * its kind, trusted or not; untrustedEvents counts the untrusted among them once more, and
 * untrusted wheel events, but not scroll events (sdk/src/signals/behavior.ts). Scrolls and focus
 * changes are left out here: a script's scrollBy() or focus() produces trusted ones, so a page
 * driven by dispatchEvent could scroll itself past the rule. (An SDK of before 2026-11-25 counted
 * untrusted scroll events too: a page that dispatches many weighs against its visitors until their
 * browsers fetch the new script, within a day.)
 */
const inputCounters = ['mouseMovements', 'keystrokes', 'clicks', 'touches'] as const

/**
 * Script-dispatched input is evidence only where the person's own does not outnumber it: pages
 * dispatch events themselves (a scroll event to trigger lazy loading, a password manager's keyboard
 * events when it fills a form), a few among a visitor's real moves, keys and clicks. A page driven
 * by dispatchEvent alone has no trusted input at all.
 */
function isInputSynthetic(behavior: BehaviorReport): boolean {
  const untrusted = behavior.untrustedEvents ?? 0
  const trusted = inputCounters.reduce((sum, counter) => sum + (behavior[counter] ?? 0), 0) - untrusted
  return untrusted > 0 && untrusted >= trusted
}

function assessBehavior(behavior: BehaviorReport): AnomalyLabel[] {
  // Whether there was any input at all is judged by behavior-signals.ts.
  const anomalies: AnomalyLabel[] = []
  if (isInputSynthetic(behavior)) anomalies.push('synthetic_input')
  // Pointer events come at the display's frame rate while moving and stop between moves; only a
  // script produces dozens of them with (nearly) no variation at all. Same for key presses.
  const isMouseRobotic = (behavior.mouseMovements ?? 0) >= MIN_EVENTS_FOR_RHYTHM && (behavior.mouseIntervalStdMs ?? 1) < 1
  const isKeyboardRobotic = (behavior.keystrokes ?? 0) >= MIN_EVENTS_FOR_RHYTHM && (behavior.keyIntervalStdMs ?? 2) < 2
  if (isMouseRobotic || isKeyboardRobotic) anomalies.push('robotic_input')
  return anomalies
}

/** The browser and automation labels this module adds for one submission. */
export function assessBrowser(evidence: BrowserEvidence): AnomalyLabel[] {
  const userAgent = headerOf(evidence.headers, 'user-agent')
  const claims = readUserAgent(userAgent ?? '')
  return [
    ...assessFetchMetadata(evidence.headers, evidence.isTrustworthyDestination, claims),
    ...assessFingerprint(evidence, userAgent, claims),
    ...assessBehavior(evidence.behavior),
  ]
}
