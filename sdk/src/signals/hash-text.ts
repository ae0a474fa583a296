/**
 * Hashes for fingerprint values: identifiers the risk model compares, never reversed. Pages on
 * HTTPS (and localhost) use WebCrypto's SHA-256 and ship no hash code. Plain-HTTP pages, where
 * `crypto.subtle` is missing, get a 128-bit non-cryptographic hash: four multiply-rotate lanes over
 * the UTF-16 code units, cross-mixed and finished with an avalanche step. It is stable and spreads
 * well, which is all an identifier needs, at a fraction of SHA-256's size in the page's bundle.
 * Either way the result is 32 lowercase hex characters.
 */
const HEX_LENGTH = 32

function avalanche(value: number): number {
  let h = value
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

export function hashTextCompact(text: string): string {
  let a = 0x9e3779b1
  let b = 0x85ebca77
  let c = 0xc2b2ae3d
  let d = 0x27d4eb2f
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    a = Math.imul(a ^ unit, 0x85ebca6b)
    a = (a << 13) | (a >>> 19)
    b = Math.imul(b ^ unit, 0xc2b2ae35)
    b = (b << 17) | (b >>> 15)
    c = Math.imul(c ^ unit, 0x27d4eb2f)
    c = (c << 11) | (c >>> 21)
    d = Math.imul(d ^ unit, 0x165667b1)
    d = (d << 19) | (d >>> 13)
  }
  // Every output word depends on every lane and on the length.
  a = avalanche(a + b + c + d + text.length)
  b = avalanche(b ^ a)
  c = avalanche(c + b)
  d = avalanche(d ^ c)
  return [a, b, c, d].map((word) => word.toString(16).padStart(8, '0')).join('')
}

export async function hashText(text: string): Promise<string> {
  if (text === '') return ''
  const subtle = typeof crypto === 'object' ? crypto.subtle : undefined
  if (subtle === undefined) return hashTextCompact(text)
  const digest = new Uint8Array(await subtle.digest('SHA-256', new TextEncoder().encode(text)))
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('').slice(0, HEX_LENGTH)
}
