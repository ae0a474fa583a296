/**
 * The reference a turned-away visitor is shown (by the SDK's forms and the gate's page): the first
 * 13 characters of the verify request's id, `1a2b3c4d-5e6f`, which is the id of its row in the
 * verification log. 48 random bits: a site would need millions of rows in its log before two
 * shared one, and the search shows every row a reference matches.
 */
export const REFERENCE_LENGTH = 13

/**
 * What the log's search takes: at least 8 hexadecimal digits of a row's id, from its start, with
 * or without its dashes (a reference, a whole id, or anything between).
 */
export const REFERENCE_PATTERN = '^[0-9a-fA-F]{8}(-?[0-9a-fA-F]){0,24}$'

const asUuid = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`

/** The first and last ids that begin with the reference's digits (a reference of REFERENCE_PATTERN). */
export function idRangeOf(reference: string): { first: string; last: string } {
  const digits = reference.replaceAll('-', '').toLowerCase()
  return { first: asUuid(digits.padEnd(32, '0')), last: asUuid(digits.padEnd(32, 'f')) }
}
