import { isUuid } from '../uuid.js'

/**
 * The position after which the next page of a log starts (the verification log, the webhook
 * delivery log): the (created_at, id) of the last row served. created_at travels as epoch
 * microseconds because PostgreSQL keeps microseconds and a millisecond Date would skip or repeat
 * rows that share a millisecond.
 */
export interface LogCursor {
  createdAtMicros: number
  id: string
}

/** Opaque to clients: they pass back what they were given and must not build their own. */
export function encodeLogCursor(cursor: LogCursor): string {
  return Buffer.from(`${cursor.createdAtMicros}.${cursor.id}`, 'utf8').toString('base64url')
}

/** The cursor, or undefined when the text is not one this service issued. */
export function decodeLogCursor(text: string): LogCursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) return undefined
  const [micros, id, ...rest] = Buffer.from(text, 'base64url').toString('utf8').split('.')
  if (micros === undefined || id === undefined || rest.length > 0 || !/^\d{1,16}$/.test(micros) || !isUuid(id)) {
    return undefined
  }
  const createdAtMicros = Number(micros)
  return Number.isSafeInteger(createdAtMicros) ? { createdAtMicros, id } : undefined
}
