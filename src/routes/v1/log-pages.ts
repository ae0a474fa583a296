import { Type } from 'typebox'
import { decodeLogCursor, encodeLogCursor, type LogCursor } from '../../domain/analytics/log-cursor.js'
import { invalidRequest } from '../../errors.js'

/** The page sizes of the account's logs (the verification log, the audit log): the default and the most. */
export const LOG_PAGE_SIZE = { default: 50, maximum: 200 } as const

/** A schema or null: the nullable fields of a log's rows. */
export const orNull = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()])

/** The query of a log read page by page, newest first; `maximum` bounds its page size. */
export function logPageQuery(defaultSize: number, maximum: number) {
  return {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum, default: defaultSize })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  }
}

/** The position a `cursor` parameter names; 400 for a text this service did not issue. */
export function positionOf(cursor: string | undefined): LogCursor | undefined {
  if (cursor === undefined) return undefined
  const position = decodeLogCursor(cursor)
  if (position === undefined) {
    throw invalidRequest([{ field: 'querystring.cursor', message: 'is not a cursor this service issued; pass nextCursor back unchanged' }])
  }
  return position
}

/** The position of a row that carries its own (createdAtMicros and id), as the logs' rows do. */
export const rowPosition = ({ createdAtMicros, id }: LogCursor): LogCursor => ({ createdAtMicros, id })

/**
 * A page out of `rows`, read with one row more than `limit`: that row tells whether another page
 * exists, without a count. nextCursor names the last row served, or null on the last page.
 */
export function pageOf<Row>(rows: readonly Row[], limit: number, positionOfRow: (row: Row) => LogCursor): { page: Row[]; nextCursor: string | null } {
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { page, nextCursor: rows.length > limit && last !== undefined ? encodeLogCursor(positionOfRow(last)) : null }
}
