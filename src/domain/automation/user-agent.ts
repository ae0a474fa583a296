import { rememberPerHeaderValue } from '../recent-cache.js'

/** What a User-Agent string claims, reduced to what the consistency checks compare. */
export interface UserAgentClaims {
  os: 'windows' | 'mac' | 'linux' | 'android' | 'ios' | 'chromeos' | 'unknown'
  /** chromium: Chrome, Edge, Opera, Brave... (send client hints); webkit-ios: every iOS browser. */
  engine: 'chromium' | 'firefox' | 'safari' | 'webkit-ios' | 'unknown'
  isMobile: boolean
  /**
   * An Android WebView (`; wv)`): the browser inside an app (Facebook's, Instagram's, a mail app's).
   * An app that changes its User-Agent, as most do, turns its client hints off.
   */
  isWebView: boolean
  /**
   * The browser's version as major * 100 + minor (Chrome 76 is 7600, Safari 16.4 is 1604), or
   * undefined when the User-Agent does not say; on iOS the system's, whose WebKit every browser uses.
   */
  version: number | undefined
  /** Claims to be a browser at all (every browser's UA starts with Mozilla/5.0). */
  isBrowserLike: boolean
}

function osOf(userAgent: string): UserAgentClaims['os'] {
  if (/Windows NT|Win64|Win32/.test(userAgent)) return 'windows'
  if (/Android/.test(userAgent)) return 'android'
  if (/iPhone|iPad|iPod/.test(userAgent)) return 'ios'
  if (/CrOS/.test(userAgent)) return 'chromeos'
  if (/Macintosh|Mac OS X/.test(userAgent)) return 'mac'
  if (/Linux|X11/.test(userAgent)) return 'linux'
  return 'unknown'
}

function parseUserAgent(userAgent: string): Readonly<UserAgentClaims> {
  const os = osOf(userAgent)
  let engine: UserAgentClaims['engine'] = 'unknown'
  if (os === 'ios') engine = 'webkit-ios'
  else if (/Firefox\/\d/.test(userAgent)) engine = 'firefox'
  else if (/(Chrome|Chromium|HeadlessChrome)\/\d/.test(userAgent)) engine = 'chromium'
  else if (/Version\/\d.*Safari\//.test(userAgent)) engine = 'safari'
  return {
    os,
    engine,
    isMobile: /Mobi|Android|iPhone|iPad|iPod/.test(userAgent),
    isWebView: os === 'android' && /; wv\)/.test(userAgent),
    version: versionOf(userAgent, engine),
    isBrowserLike: userAgent.startsWith('Mozilla/5.0'),
  }
}

/**
 * What a User-Agent claims, remembered per User-Agent (real ones repeat, and every verification
 * reads its own): the claims are shared, read-only.
 */
export const readUserAgent: (userAgent: string) => Readonly<UserAgentClaims> = rememberPerHeaderValue(parseUserAgent)

const versionPatterns: Partial<Record<UserAgentClaims['engine'], RegExp>> = {
  chromium: /(?:Chrome|Chromium|HeadlessChrome)\/(\d+)/,
  firefox: /Firefox\/(\d+)(?:\.(\d+))?/,
  safari: /Version\/(\d+)(?:\.(\d+))?/,
  'webkit-ios': /OS (\d+)(?:_(\d+))? like Mac OS X/,
}

function versionOf(userAgent: string, engine: UserAgentClaims['engine']): number | undefined {
  const match = versionPatterns[engine]?.exec(userAgent)
  if (match === null || match === undefined) return undefined
  return Number(match[1]) * 100 + Number(match[2] ?? 0)
}

/** navigator.platform values each OS reports (iPadOS in desktop mode says MacIntel). */
const platformsByOs: Record<Exclude<UserAgentClaims['os'], 'unknown'>, RegExp> = {
  windows: /^Win/,
  mac: /^Mac/,
  linux: /^(Linux|X11|FreeBSD|OpenBSD)/,
  android: /^(Linux|Android|null$)/,
  ios: /^(iPhone|iPad|iPod|MacIntel)/,
  chromeos: /^(Linux|CrOS)/,
}

/** Whether navigator.platform contradicts the OS the User-Agent names (an empty platform says nothing). */
export function doesPlatformContradict(claims: UserAgentClaims, platform: string): boolean {
  if (platform === '' || claims.os === 'unknown') return false
  return !platformsByOs[claims.os].test(platform)
}

/** Sec-CH-UA-Platform values (quoted in the header) by the OS the User-Agent names. */
const hintPlatformsByOs: Record<Exclude<UserAgentClaims['os'], 'unknown'>, string[]> = {
  windows: ['Windows'],
  mac: ['macOS'],
  linux: ['Linux'],
  android: ['Android'],
  ios: ['iOS'],
  chromeos: ['Chrome OS', 'ChromeOS', 'Chromium OS'],
}

export function doesHintPlatformContradict(claims: UserAgentClaims, hintPlatform: string): boolean {
  const platform = hintPlatform.replaceAll('"', '').trim()
  if (platform === '' || platform === 'Unknown' || claims.os === 'unknown') return false
  return !hintPlatformsByOs[claims.os].includes(platform)
}

/**
 * The deliberately meaningless brand: "Not", "A" and "Brand", each of the first two followed by a
 * character that changes per version (`"Not)A;Brand"`; older ones used `\\` and `"` too). The
 * characters include `;` and `=` ("Not)A;Brand", "Not;A=Brand": two Chromium majors in eleven),
 * so the brand is taken out before any split on `;`.
 */
const GREASE_BRAND = /\\?not.?a.?brand/gi

/**
 * Brand names of a Sec-CH-UA header, a structured-field list of quoted strings with parameters:
 * `"Chromium";v="140", "Not)A;Brand";v="24", "Google Chrome";v="140"`.
 */
export function brandNamesOfHeader(header: string): Set<string> {
  const names = Array.from(header.matchAll(/(?:^|,)\s*"((?:[^"\\]|\\.)*)"/g), (match) => (match[1] ?? '').replace(/\\(.)/g, '$1'))
  return new Set(names.filter((name) => isBrandName(name.replace(GREASE_BRAND, ''))))
}

/**
 * The User-Agent token that carries each brand's major version: every Chromium browser's User-Agent
 * names its Chromium version as `Chrome/NN` (Chrome, Brave, Opera, Samsung Internet, WebViews);
 * Edge adds its own as `Edg/NN` (`EdgA/NN` on Android). Other brands (Opera's `OPR/`, Samsung's)
 * are left out: the Chromium brand they send beside their own is compared instead.
 */
const versionTokensByBrand: ReadonlyMap<string, RegExp> = new Map([
  ['Chromium', /(?:\b|Headless)Chrome\/(\d+)(?:\.(\d+))?/],
  ['Google Chrome', /\bChrome\/(\d+)(?:\.(\d+))?/],
  ['Microsoft Edge', /\bEdgA?\/(\d+)(?:\.(\d+))?/],
])

/**
 * The major version frozen at 99 by Chrome's and Edge's ForceMajorVersionToMinorPosition policy,
 * which moved the real major into the minor position (`Chrome/99.140.0.0`) for sites that could
 * not read a three-digit version.
 */
const FROZEN_MAJOR_VERSION = 99

/**
 * Whether the major version a Sec-CH-UA brand gives (Chromium, Google Chrome, Microsoft Edge)
 * differs from the one the User-Agent's token for that brand gives. A browser's reduced User-Agent
 * keeps its real major version, so real browsers agree; an automation tool that overrides only the
 * User-Agent leaves the client hints at the engine's own version. A brand or a token that is absent
 * says nothing (Edge sends a plain Chrome User-Agent to the sites on its compatibility list).
 */
export function doesHintVersionContradict(userAgent: string, hintBrands: string): boolean {
  for (const [brand, version] of brandVersionsOfHeader(hintBrands)) {
    const match = versionTokensByBrand.get(brand)?.exec(userAgent)
    if (match === null || match === undefined) continue
    const major = Number(match[1])
    const minor = Number(match[2] ?? 0)
    if (major !== version && !(major === FROZEN_MAJOR_VERSION && minor === version)) return true
  }
  return false
}

/** The brands of a Sec-CH-UA header that carry a major version (`"Chromium";v="140"`), by name. */
function brandVersionsOfHeader(header: string): Map<string, number> {
  const matches = header.matchAll(/(?:^|,)\s*"((?:[^"\\]|\\.)*)"\s*;\s*v\s*=\s*"?(\d+)/g)
  return new Map(Array.from(matches, (match): [string, number] => [(match[1] ?? '').replace(/\\(.)/g, '$1'), Number(match[2])]))
}

/** Brand names of the SDK's `userAgentBrands`, joined by `;`: `Chromium;Not)A;Brand;Google Chrome`. */
export function brandNamesOfReport(brands: string): Set<string> {
  return new Set(brands.replace(GREASE_BRAND, '').split(';').map((name) => name.trim()).filter(isBrandName))
}

/**
 * What is left of a brand once the GREASE brand is taken out: a real name, or only the GREASE
 * brand's own punctuation (";Not A Brand" and ".Not/A)Brand" put one before it), which is not one.
 */
function isBrandName(rest: string): boolean {
  return /[\p{L}\p{N}]/u.test(rest)
}
