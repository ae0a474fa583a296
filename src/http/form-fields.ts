import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors.js'
import { readUtf8Body } from './utf8-body.js'

/** A form's fields: a name sent more than once holds its values in order (the route's schema refuses it). */
export type FormFields = Record<string, string | string[]>

const malformedEscape = () => new ApiError('validation_error', 'The body has a %-escape that does not decode to UTF-8.')

/** A `%` that begins no escape (not followed by two hex digits): kept as written, as browsers' form parsing keeps it. */
const bareEscape = /%(?![0-9A-Fa-f]{2})/g

/**
 * One name or value of a form: `+` is a space, then %-escapes are decoded by decodeURIComponent,
 * which throws where the escaped bytes are not UTF-8 (`%FF`, a lone `%E9`, an encoded surrogate):
 * lenient decoders keep such a value as written (fast-querystring, @fastify/formbody's: `%FF` and
 * `%25FF` were one value) or put U+FFFD for the bytes (URLSearchParams, node's querystring: `%FF`
 * and `%FE` were one). A `%` that begins no escape (`100%`, an
 * unescaped zone id `fe80::1%eth0`) stays as written, as the URL standard's form parser keeps it;
 * only then is the text looked at again. Text without `+` or `%` is taken as it is.
 */
function decodeFormText(text: string): string | undefined {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text
  if (!spaced.includes('%')) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    const escaped = spaced.replace(bareEscape, '%25')
    if (escaped === spaced) return undefined
    try {
      return decodeURIComponent(escaped)
    } catch {
      return undefined
    }
  }
}

/**
 * The fields of a form-urlencoded body already read as text, or the error for a %-escape that is
 * not UTF-8. Pairs are split as fast-querystring (@fastify/formbody's parser) splits
 * them: empty pairs are skipped, a name without `=` has the empty value, and the object has no
 * prototype (a field named __proto__ is a field).
 */
export function parseFormFields(text: string): FormFields | ApiError {
  const fields: FormFields = Object.create(null) as FormFields
  // The first `=` from the pair's start on, or -1 when the rest has none: looked for again only
  // once passed, so pairs without one do not each scan the rest of the body (quadratic).
  let equals = text.indexOf('=')
  for (let start = 0; start <= text.length; ) {
    let end = text.indexOf('&', start)
    if (end === -1) end = text.length
    if (equals !== -1 && equals < start) equals = text.indexOf('=', start)
    if (end > start) {
      const hasValue = equals !== -1 && equals < end
      const name = decodeFormText(text.slice(start, hasValue ? equals : end))
      const value = hasValue ? decodeFormText(text.slice(equals + 1, end)) : ''
      if (name === undefined || value === undefined) return malformedEscape()
      const earlier = fields[name]
      if (earlier === undefined) fields[name] = value
      else if (typeof earlier === 'string') fields[name] = [earlier, value]
      else earlier.push(value)
    }
    start = end + 1
  }
  return fields
}

/**
 * Where a querystring (the text after `?`) has a %-escape that is not UTF-8 (`?q=%C3%28`, `%FF`),
 * read as parseFormFields reads a form: the decoded name of the first parameter whose value has
 * one, '' when a name has one itself; undefined when every escape decodes. Fastify's parser keeps
 * such text as written, so `%FF` and `%25FF` would be one value, as a form's were.
 */
export function findMalformedQueryEscape(query: string): string | undefined {
  if (!query.includes('%')) return undefined
  for (const pair of query.split('&')) {
    const equals = pair.indexOf('=')
    const name = decodeFormText(equals === -1 ? pair : pair.slice(0, equals))
    if (name === undefined) return ''
    if (equals !== -1 && decodeFormText(pair.slice(equals + 1)) === undefined) return name
  }
  return undefined
}

/**
 * application/x-www-form-urlencoded bodies for the routes of this scope (Siteverify, its
 * feedback, the demo form), read as JSON bodies are (utf8-body.ts): bytes that are not UTF-8 are
 * 400 validation_error, a charset label they would be read wrong under 415, and a %-escape that
 * is not UTF-8 400 too. Not @fastify/formbody: its parser option is handed the body
 * already decoded leniently (Buffer#toString), and not the Content-Type.
 */
export function acceptFormFields(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) => {
    // parseAs 'buffer': Fastify's type allows either for every parser.
    const text = readUtf8Body(request.headers['content-type'], body as Buffer)
    const fields = text instanceof ApiError ? text : parseFormFields(text)
    if (fields instanceof ApiError) done(fields, undefined)
    else done(null, fields)
  })
}
