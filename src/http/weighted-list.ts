/** One element of a weighted list: its value, lowercased, its weight, and its position in the header. */
export interface WeightedEntry {
  value: string
  /** From 0 (refused) to 1 (the default when the element names no weight). */
  q: number
  /** The element's position among the header's elements, empty ones counted: the order of equal weights. */
  index: number
}

/** A weight as RFC 9110 writes it (section 12.4.2): 0 to 1, with up to three decimals. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

/**
 * The elements of a comma-separated list of values with weights, as Accept-Encoding and
 * Accept-Language send them (`gzip;q=0.8`, `de-DE, de;q=0.9`), by one set of rules for both:
 * - the weight is the element's `q` parameter, its name in any case, with optional whitespace
 *   around `;` and `=` (`de ; Q = 0.5`); other parameters are passed over, and the first `q` counts;
 * - a weight that is not a number from 0 to 1 with at most three decimals (`q=abc`, `q=2`,
 *   `q=1.5`, `q=0.0001`) skips its element: an unreadable weight is no reason to rank it anywhere;
 * - values are lowercased (codings and language tags are both case-insensitive), empty elements
 *   are skipped;
 * - no more than `maxEntries` elements are read (a browser sends a handful), so that a header of
 *   thousands costs no more than a browser's.
 * The entries keep the header's order; what a duplicate or a weight of 0 means is the caller's.
 */
export function parseWeightedList(header: string | undefined, maxEntries: number): WeightedEntry[] {
  if (header === undefined) return []
  const entries: WeightedEntry[] = []
  header.split(',', maxEntries).forEach((element, index) => {
    const [value = '', ...parameters] = element.split(';').map((part) => part.trim())
    if (value === '') return
    // `q` without `=` is a weight left unwritten: unreadable, as `q=` is.
    const weight = parameters.map((parameter) => /^q\s*(?:=\s*(.*))?$/i.exec(parameter)).find((match) => match !== null)
    const q = weight === undefined ? '1' : (weight[1] ?? '')
    if (QVALUE.test(q)) entries.push({ value: value.toLowerCase(), q: Number(q), index })
  })
  return entries
}
