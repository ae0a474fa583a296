import type { LogCursor } from '../../domain/analytics/log-cursor.js'

/**
 * Keyset pagination over (created_at, id), newest first, as the verification log, the webhook
 * delivery log and the audit log are read: the cost of a page does not grow with its depth.
 * created_at travels as epoch microseconds (LogCursor), the precision PostgreSQL keeps.
 */

/** The select-list item that gives a row's position. */
export const CREATED_AT_MICROS = '(extract(epoch FROM created_at) * 1000000)::int8 AS created_at_micros'

/** The condition "after the cursor" with its microseconds and id as parameters $micros and $id. */
export function afterPosition(microsParameter: number, idParameter: number): string {
  return `(created_at, id) < (timestamptz 'epoch' + $${microsParameter}::int8 * interval '1 microsecond', $${idParameter}::uuid)`
}

/** A condition of a page, with `?` for each of its values in turn (this code's own SQL, never input). */
export interface PageFilter {
  condition: string
  values: readonly unknown[]
}

export const where = (condition: string, ...values: unknown[]): PageFilter => ({ condition, values })

/** Where a page starts and how long it is; from and to (from <= created_at < to) bound the rows of an export. */
export interface PagePosition {
  after?: LogCursor
  limit: number
  from?: Date
  to?: Date
}

/** The conditions of a time range: on created_at, the column the logs' indexes end in before id. */
function createdWithin({ from, to }: PagePosition): PageFilter[] {
  return [...(from === undefined ? [] : [where('created_at >= ?', from)]), ...(to === undefined ? [] : [where('created_at < ?', to)])]
}

/**
 * The statement and parameters of a page of `source` ("SELECT ... FROM table"), newest first: the
 * rows that meet every filter given (an undefined one is left out), within the page's from and to,
 * after the cursor, at most `limit` of them. Assembled from fixed fragments only, so each
 * combination of filters gets a plan that can use the index matching it.
 */
export function newestFirstPage(source: string, filters: readonly (PageFilter | undefined)[], page: PagePosition): { sql: string; params: unknown[] } {
  const params: unknown[] = []
  const conditions = [...filters, ...createdWithin(page)].flatMap((filter) => {
    if (filter === undefined) return []
    let next = 0
    return [filter.condition.replaceAll('?', () => `$${params.push(filter.values[next++])}`)]
  })
  if (page.after !== undefined) {
    params.push(page.after.createdAtMicros, page.after.id)
    conditions.push(afterPosition(params.length - 1, params.length))
  }
  params.push(page.limit)
  return { sql: `${source} WHERE ${conditions.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`, params }
}
