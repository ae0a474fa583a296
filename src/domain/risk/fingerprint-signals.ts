import type { AnomalyLabel } from './anomalies.js'
import type { ScoringInput, SignalValue } from './scoring-input.js'

const placeholderPattern = /^(?:0|false|null|undefined|none|n\/?a|error|unknown|unsupported|blocked|disabled|test)$/i
const softwareRendererPattern = /swiftshader|llvmpipe|softpipe|software rasterizer|mesa offscreen|microsoft basic render/i

function isAbsent(value: SignalValue | undefined): boolean {
  return value === undefined || value === null || value === ''
}

/** A value no rendering produces: a placeholder word, one character repeated, or not text at all. */
function isPlaceholder(value: SignalValue | undefined): boolean {
  if (typeof value === 'number') return value === 0
  if (typeof value !== 'string') return true
  const text = value.trim()
  // Nothing but white space is as constant as one character repeated.
  return text === '' || placeholderPattern.test(text) || /^(.)\1*$/.test(text)
}

/**
 * Fingerprint keys read: canvas (string), webgl (string, a hash or the renderer), webglRenderer
 * (string, optional), webdriver (boolean), headless (boolean).
 */
export function detectFingerprintAnomalies(input: ScoringInput): AnomalyLabel[] {
  const { fingerprint } = input.submission
  const labels: AnomalyLabel[] = []
  if (isAbsent(fingerprint.canvas)) labels.push('canvas_missing')
  else if (isPlaceholder(fingerprint.canvas)) labels.push('canvas_constant')
  if (isAbsent(fingerprint.webgl)) labels.push('webgl_missing')
  else if (isPlaceholder(fingerprint.webgl)) labels.push('webgl_constant')
  const renderers = [fingerprint.webgl, fingerprint.webglRenderer].filter((value) => typeof value === 'string')
  if (renderers.some((renderer) => softwareRendererPattern.test(renderer))) labels.push('webgl_software_renderer')
  if (fingerprint.webdriver === true) labels.push('webdriver_detected')
  if (fingerprint.headless === true) labels.push('headless_detected')
  return labels
}
