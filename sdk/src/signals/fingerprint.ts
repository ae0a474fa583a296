import { hashText } from './hash-text.js'

/**
 * Device and automation signals. Identifying values (the canvas image, the WebGL renderer)
 * leave the page only as hashes (hash-text.ts); the rest are counts, flags and coarse settings.
 */
export interface Fingerprint {
  /** Hash of a drawn canvas; '' when canvas is unavailable. */
  canvas: string
  /** Hash of the WebGL vendor and renderer; '' when WebGL is unavailable. */
  webgl: string
  /** The renderer is a software rasterizer (SwiftShader, llvmpipe): typical of headless and VMs. */
  webglSoftware: boolean
  webdriver: boolean
  /** "Headless" in the user agent or its client-hint brands. */
  headlessUserAgent: boolean
  /** Properties that automation tools leave on window or document. */
  automationMarkers: number
  pluginsLength: number
  languagesLength: number
  language: string
  hardwareConcurrency: number
  deviceMemory: number
  maxTouchPoints: number
  screenWidth: number
  screenHeight: number
  colorDepth: number
  /** Headless browsers often report an outer window of 0 x 0. */
  outerWidth: number
  outerHeight: number
  timezone: string
  timezoneOffset: number
  platform: string
  /** Client-hint brands (e.g. "Chromium;Google Chrome"), '' where the browser has none. */
  userAgentBrands: string
}

const automationProperties = [
  '__webdriver_evaluate', '__selenium_evaluate', '__webdriver_script_fn', '__driver_evaluate', '__fxdriver_unwrapped',
  '_Selenium_IDE_Recorder', '_selenium', 'callSelenium', 'callPhantom', '_phantom', '__nightmare', 'domAutomation',
  'domAutomationController', '__playwright__binding__', '__pwInitScripts', 'cdc_adoQpoasnfa76pfcZLmcfl_Array',
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
  let markers = automationProperties.filter((name) => name in globals).length
  // ChromeDriver names a document property after its random "cdc_" key.
  markers += Object.keys(document).filter((name) => name.startsWith('$cdc_') || name.startsWith('cdc_')).length
  return markers
}

async function collect(): Promise<Fingerprint> {
  const hints = navigator as Navigator & NavigatorHints
  const renderer = readRenderer()
  const brands = (hints.userAgentData?.brands ?? []).map((entry) => entry.brand).join(';')
  const [canvas, webgl] = await Promise.all([hashText(drawCanvas()), hashText(renderer)])
  return {
    canvas,
    webgl,
    webglSoftware: /swiftshader|llvmpipe|software|mesa offscreen/i.test(renderer),
    webdriver: navigator.webdriver,
    headlessUserAgent: /headless/i.test(`${navigator.userAgent} ${brands}`),
    automationMarkers: countAutomationMarkers(),
    pluginsLength: navigator.plugins.length,
    languagesLength: navigator.languages.length,
    language: navigator.language,
    hardwareConcurrency: navigator.hardwareConcurrency,
    deviceMemory: hints.deviceMemory ?? 0,
    maxTouchPoints: navigator.maxTouchPoints,
    screenWidth: screen.width,
    screenHeight: screen.height,
    colorDepth: screen.colorDepth,
    outerWidth: window.outerWidth,
    outerHeight: window.outerHeight,
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    timezoneOffset: new Date().getTimezoneOffset(),
    platform: navigator.platform,
    userAgentBrands: brands,
  }
}

let collected: Promise<Fingerprint> | undefined

/**
 * Collects once per page, when the browser is idle, so drawing and hashing never delay the page.
 * Later calls get the same answer.
 */
export function collectFingerprint(): Promise<Fingerprint> {
  collected ??= new Promise((resolve) => {
    const run = () => resolve(collect())
    if (typeof requestIdleCallback === 'function') requestIdleCallback(run, { timeout: 500 })
    else setTimeout(run, 0)
  })
  return collected
}
