/**
 * Keyset pagination over (created_at, id), newest first, as the verification log and the webhook
 * delivery log are read: the cost of a page does not grow with its depth. created_at travels as
 * epoch microseconds (LogCursor), the precision PostgreSQL keeps.
 */

/** The select-list item that gives a row's position. */
export const CREATED_AT_MICROS = '(extract(epoch FROM created_at) * 1000000)::int8 AS created_at_micros'

/** The condition "after the cursor" with its microseconds and id as parameters $micros and $id. */
export function afterPosition(microsParameter: number, idParameter: number): string {
  return `(created_at, id) < (timestamptz 'epoch' + $${microsParameter}::int8 * interval '1 microsecond', $${idParameter}::uuid)`
}
