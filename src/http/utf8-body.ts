import { ApiError } from '../errors.js'

/**
 * One decoder for every body: fatal, so that bytes that are not UTF-8 refuse the body rather than
 * become U+FFFD (two different invalid passwords would be the same one, a site name would be
 * stored damaged). A leading byte order mark is skipped, as the JSON parser skipped it before.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The charset parameter of a Content-Type, unquoted, or undefined when it has none. */
const charsetParameter = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i

/**
 * The error for a body whose Content-Type names a charset other than UTF-8 (415), or undefined:
 * the body is decoded as UTF-8 whatever it says, so a Latin-1 or UTF-16 body would be read wrong.
 * No charset is UTF-8 (RFC 8259); `utf8` is an alias browsers and clients send.
 */
export function charsetRefusal(contentType: string | undefined): ApiError | undefined {
  // The usual header, as clients send it, costs no regular expression.
  if (contentType === undefined || contentType.length <= 'application/json'.length) return undefined
  const match = charsetParameter.exec(contentType)
  if (match === null) return undefined
  const charset = (match[1] ?? match[2] ?? '').toLowerCase()
  if (charset === 'utf-8' || charset === 'utf8') return undefined
  return new ApiError('unsupported_media_type', `The body's charset is ${charset || 'empty'}; only UTF-8 is accepted.`)
}

/** The body as text, or the error for bytes that are not UTF-8 (400 validation_error). */
export function decodeUtf8Body(body: Buffer): string | ApiError {
  try {
    return utf8.decode(body)
  } catch {
    return new ApiError('validation_error', 'The body is not valid UTF-8.')
  }
}
