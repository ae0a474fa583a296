import { hashText } from './hash-text.js'

/**
 * Device and automation signals. Identifying values (the canvas image, the WebGL renderer)
 * leave the page only as hashes (hash-text.ts); the rest are counts, flags and coarse settings.
 * A signal this browser lacks, or throws reading (an old webview without navigator.languages), is
 * left out of the submission: the service reads a missing field as missing, never as a value.
 */
export interface Fingerprint {
  /** Hash of a drawn canvas; '' when canvas is unavailable. */
  canvas?: string
  /** Hash of the WebGL vendor and renderer; '' when WebGL is unavailable. */
  webgl?: string
  /** The renderer is a software rasterizer (SwiftShader, llvmpipe): typical of headless and VMs. */
  webglSoftware?: boolean
  webdriver?: boolean
  /** "Headless" in the user agent or its client-hint brands. */
  headlessUserAgent?: boolean
  /** Properties that automation tools leave on window or document. */
  automationMarkers?: number
  /** Natives that stealth setups patch (countPatchedNatives) found not native. */
  patchedNatives?: number
  pluginsLength?: number
  languagesLength?: number
  language?: string
  hardwareConcurrency?: number
  deviceMemory?: number
  maxTouchPoints?: number
  screenWidth?: number
  screenHeight?: number
  colorDepth?: number
  /** Headless browsers often report an outer window of 0 x 0. */
  outerWidth?: number
  outerHeight?: number
  timezone?: string
  timezoneOffset?: number
  platform?: string
  /** Client-hint brands (e.g. "Chromium;Google Chrome"), '' where the browser has none. */
  userAgentBrands?: string
}

const automationProperties = [
  '__webdriver_evaluate', '__selenium_evaluate', '__webdriver_script_fn', '__driver_evaluate', '__fxdriver_unwrapped',
  '_Selenium_IDE_Recorder', '_selenium', 'callSelenium', 'callPhantom', '_phantom', '__nightmare', 'domAutomation',
  'domAutomationController', '__playwright__binding__', '__pwInitScripts',
]

function drawCanvas(): string {
  try {
    const canvas = document.createElement('canvas')
    canvas.width = 240
    canvas.height = 60
    const context = canvas.getContext('2d')
    if (context === null) return ''
    context.textBaseline = 'alphabetic'
    context.fillStyle = '#f60'
    context.fillRect(100, 1, 62, 20)
    context.fillStyle = '#069'
    context.font = '15px Arial'
    context.fillText('Tollgate, \u00e9\u00df \ud83d\ude03', 2, 15)
    context.fillStyle = 'rgba(102, 204, 0, 0.7)'
    context.beginPath()
    context.arc(50, 40, 18, 0, Math.PI * 2)
    context.fill()
    return canvas.toDataURL()
  } catch {
    return ''
  }
}

function readRenderer(): string {
  try {
    const gl = document.createElement('canvas').getContext('webgl')
    if (gl === null) return ''
    const info = gl.getExtension('WEBGL_debug_renderer_info')
    const vendor: unknown = gl.getParameter(info === null ? gl.VENDOR : info.UNMASKED_VENDOR_WEBGL)
    const renderer: unknown = gl.getParameter(info === null ? gl.RENDERER : info.UNMASKED_RENDERER_WEBGL)
    gl.getExtension('WEBGL_lose_context')?.loseContext()
    return `${String(vendor)}|${String(renderer)}`
  } catch {
    return ''
  }
}

interface NavigatorHints {
  deviceMemory?: number
  userAgentData?: { brands?: { brand: string }[] }
}

function countAutomationMarkers(): number {
  const globals = window as unknown as Record<string, unknown>
  // ChromeDriver names window properties (cdc_..._Array) and a document property ($cdc_...) after its random "cdc_" key.
  return automationProperties.filter((name) => name in globals).length + [window, document].flatMap(Object.keys).filter((name) => /^\$?cdc_/.test(name)).length
}

/**
 * A function the browser itself provides: its whole source is `function name() { [native code] }`
 * (a getter's name reads `get webdriver`, a bound function's is empty; white space varies by
 * browser). No function written in JavaScript reads so: `[native code]` is no statement, so a
 * comment or string holding the words leaves code between them and the body's braces, or a `{`
 * before them (`// { [native code]` just before the closing brace).
 */
function isNative(value: unknown): boolean {
  return typeof value === 'function' && /^function[^{]*{\s*\[native code]\s*}$/.test(Function.prototype.toString.call(value))
}

/**
 * Natives that stealth setups replace to hide automation (navigator.webdriver, the WebGL renderer,
 * the notification permission, the plugins and languages) and that pages have no reason to touch:
 * a getter defined on navigator itself, or one that is not native, counts. Function.prototype.toString
 * counts when it does not say it is native itself (core-js replaces it with one that does). A tool
 * that patches toString to show every function as native defeats this (docs/risk.md, "Limits").
 */
function countPatchedNatives(): number {
  const own = Object.getOwnPropertyDescriptor
  // The getters and methods are only read here, never called (unbound-method).
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const changed = ['webdriver', 'plugins', 'languages'].filter((name) => own(navigator, name) ?? !isNative((own(Navigator.prototype, name) ?? { get: Object }).get))
  const gl = (window as { WebGLRenderingContext?: typeof WebGLRenderingContext }).WebGLRenderingContext
  // eslint-disable-next-line @typescript-eslint/unbound-method
  return changed.length + [Function.prototype.toString, gl?.prototype.getParameter, navigator.permissions?.query]
    .filter((native) => native && !isNative(native)).length
}

/** One signal, or undefined (left out) when reading it throws or gives nothing. */
function read<T>(get: () => T): T | undefined {
  try {
    return get() ?? undefined
  } catch {
    return undefined
  }
}

async function collect(): Promise<Fingerprint> {
  const hints = navigator as Navigator & NavigatorHints
  const renderer = readRenderer()
  const brands = read(() => (hints.userAgentData?.brands ?? []).map((entry) => entry.brand).join(';'))
  const [canvas, webgl] = await Promise.all([hashText(drawCanvas()), hashText(renderer)])
  return {
    canvas,
    webgl,
    webglSoftware: /swiftshader|llvmpipe|software|mesa offscreen/i.test(renderer),
    webdriver: read(() => navigator.webdriver),
    headlessUserAgent: read(() => /headless/i.test(`${navigator.userAgent} ${brands}`)),
    automationMarkers: read(countAutomationMarkers),
    patchedNatives: read(countPatchedNatives),
    pluginsLength: read(() => navigator.plugins.length),
    languagesLength: read(() => navigator.languages.length),
    language: read(() => navigator.language),
    hardwareConcurrency: read(() => navigator.hardwareConcurrency),
    deviceMemory: read(() => hints.deviceMemory ?? 0),
    maxTouchPoints: read(() => navigator.maxTouchPoints),
    screenWidth: read(() => screen.width),
    screenHeight: read(() => screen.height),
    colorDepth: read(() => screen.colorDepth),
    outerWidth: read(() => window.outerWidth),
    outerHeight: read(() => window.outerHeight),
    timezone: read(() => Intl.DateTimeFormat().resolvedOptions().timeZone),
    timezoneOffset: read(() => new Date().getTimezoneOffset()),
    platform: read(() => navigator.platform),
    userAgentBrands: brands,
  }
}

let collected: Promise<Fingerprint> | undefined

/**
 * Collects once per page, when the browser is idle, so drawing and hashing never delay the page.
 * Later calls get the same answer. Should collecting fail all the same, the submission goes
 * without signals rather than not at all, and the failure is not kept: the next call tries again.
 */
export function collectFingerprint(): Promise<Fingerprint> {
  collected ??= new Promise<Fingerprint>((resolve) => {
    const run = () => resolve(collect())
    if (typeof requestIdleCallback === 'function') requestIdleCallback(run, { timeout: 500 })
    else setTimeout(run, 0)
  }).catch(() => {
    collected = undefined
    return {}
  })
  return collected
}
