import { ApiError } from '../errors.js'

/**
 * One decoder for every body: fatal, so that bytes that are not UTF-8 refuse the body rather than
 * become U+FFFD (two different invalid passwords would be the same one, a site name would be
 * stored damaged). A leading byte order mark is skipped, as the JSON parser skipped it before.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The charset parameter of a Content-Type, unquoted, or undefined when it has none. */
const charsetParameter = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i

/** Charsets whose text is ASCII bytes, read as UTF-8 reads them: `utf8` and `ascii` are aliases clients send. */
const utf8Compatible = new Set(['utf-8', 'utf8', 'us-ascii', 'ascii'])

/** Labels whose ASCII text is not ASCII bytes (two or four bytes a character): never read as UTF-8. */
const wideCharset = /^(?:utf-?16|utf-?32|ucs-?2|ucs-?4)/

/** Whether every byte of the body is below 0x80: text that reads the same in any ASCII-compatible charset. */
function isAsciiOnly(body: Buffer): boolean {
  for (const byte of body) if (byte >= 0x80) return false
  return true
}

/**
 * The error for a body whose Content-Type names a charset it cannot be read as UTF-8 in (415), or
 * undefined: the body is decoded as UTF-8 whatever it says, so a Latin-1 é or any UTF-16 would be
 * read wrong. No charset is UTF-8 (RFC 8259). Another charset's label is taken when the body is
 * ASCII alone, which reads the same in all of them: a backend's Siteverify call labelled
 * `iso-8859-1` by its HTTP library verifies as it did before bodies had to be UTF-8.
 */
function charsetRefusal(contentType: string | undefined, body: Buffer): ApiError | undefined {
  // A type without parameters (the usual header, JSON's or a form's) costs no regular expression.
  if (contentType === undefined || !contentType.includes(';')) return undefined
  const match = charsetParameter.exec(contentType)
  if (match === null) return undefined
  const charset = (match[1] ?? match[2] ?? '').toLowerCase()
  if (utf8Compatible.has(charset)) return undefined
  // Only here is the body scanned: UTF-8 and no charset, the usual ones, cost nothing more.
  if (charset !== '' && !wideCharset.test(charset) && isAsciiOnly(body)) return undefined
  return new ApiError('unsupported_media_type', `The body's charset is ${charset || 'empty'}; only UTF-8 (or ASCII text under another label) is accepted.`)
}

/** The body as text, or the error for bytes that are not UTF-8 (400 validation_error). */
function decodeUtf8Body(body: Buffer): string | ApiError {
  try {
    return utf8.decode(body)
  } catch {
    return new ApiError('validation_error', 'The body is not valid UTF-8.')
  }
}

/**
 * The body as text under the rules above (charset, then bytes), or the error to answer: what every
 * parser of text (JSON, form-urlencoded, multipart fields) reads a body with.
 */
export function readUtf8Body(contentType: string | undefined, body: Buffer): string | ApiError {
  return charsetRefusal(contentType, body) ?? decodeUtf8Body(body)
}
