import { createHash } from 'node:crypto'

/** The SDK's canvas value: the first 32 hex characters of SHA-256 of the canvas data URL. */
function canvasHashOf(dataUrl: string): string {
  return createHash('sha256').update(dataUrl, 'utf8').digest('hex').slice(0, 32)
}

/**
 * Canvas values that carry no device information: what a browser returns when drawing is
 * blocked or the canvas is unusable ('data:,' is toDataURL of a canvas that cannot be read),
 * and placeholders that hand-written clients send. A replayed real value is caught instead by
 * fingerprint_many_ips.
 */
const knownConstants = new Set([
  canvasHashOf('data:,'),
  canvasHashOf('data:image/png;base64,'),
  // The same two as plain-HTTP pages send them: without crypto.subtle the SDK hashes with its
  // compact hash (sdk/src/signals/hash-text.ts), whose values a test checks against these.
  '5cea7b8dcf689390274fb6e449a72d97',
  '2c48296b9fda6160c8f61df613dbf803',
  'undefined',
  'null',
  'canvas',
  'test',
])

export function isConstantCanvas(canvas: string): boolean {
  // A single repeated character ('0000...', 'aaaa...') is a placeholder, not a hash.
  return knownConstants.has(canvas.toLowerCase()) || /^(.)\1*$/.test(canvas)
}
