import { parseWeightedList } from '../../http/weighted-list.js'

/** The encodings a route may have a file pre-compressed in, best first: Brotli is smaller. */
export type ContentEncoding = 'br' | 'gzip'

/**
 * Which of `available` (best first) to send for a request's Accept-Encoding, or `identity` for the
 * file as it is (RFC 9110, section 12.5.3). A coding the header names with `q=0` is refused, and so
 * is one it leaves to a `*;q=0`; `*` accepts the codings it does not name; `x-gzip` is gzip.
 * Higher q wins, then the order of `available` (Brotli over gzip at equal q). An explicit
 * `identity` with a higher q than every coding gets the plain file, as does an absent or empty
 * header (a client that says nothing may not decode anything). The header is read by the rules
 * of parseWeightedList (an element whose q is not a number from 0 to 1 is skipped).
 */
export function chooseContentEncoding(acceptEncoding: string | undefined, available: readonly ContentEncoding[]): ContentEncoding | 'identity' {
  const qualities = new Map<string, number>()
  // A browser sends a handful; more than 32 elements is no browser's header.
  for (const { value, q } of parseWeightedList(acceptEncoding, 32)) {
    const coding = value === 'x-gzip' ? 'gzip' : value
    // A coding named twice takes its best weight.
    qualities.set(coding, Math.max(q, qualities.get(coding) ?? 0))
  }
  const wildcard = qualities.get('*')
  let chosen: ContentEncoding | 'identity' = 'identity'
  let chosenQuality = 0
  for (const coding of available) {
    const quality = qualities.get(coding) ?? wildcard ?? 0
    if (quality > chosenQuality) [chosen, chosenQuality] = [coding, quality]
  }
  const identity = qualities.get('identity')
  return identity !== undefined && identity > chosenQuality ? 'identity' : chosen
}
