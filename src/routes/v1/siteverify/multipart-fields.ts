import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy'
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../../../errors.js'
import { readUtf8Body } from '../../../http/utf8-body.js'

export interface MultipartLimits {
  fields: number
  fieldSize: number
}

function refusal(message: string): Error {
  // 400: the scoped error handler turns it into Siteverify's bad-request.
  return Object.assign(new Error(message), { statusCode: 400 })
}

/**
 * multipart/form-data bodies (Turnstile's FormData example) as an object of their text fields.
 * A file part, too many fields or a field over the size limit refuse the body. The body is read
 * as a buffer first, so the app's body limit applies as to any other body.
 *
 * The whole body must be UTF-8 text, as a JSON body must (utf8-body.ts, charset label included):
 * Busboy would decode a field's bytes that are not UTF-8 to U+FFFD, so that two different values
 * were one. Boundaries and part headers are ASCII and a file is refused anyway, so a body of text
 * fields is all UTF-8, and each field's bytes, cut at ASCII, are UTF-8 too: Busboy's decoding of
 * them is then exact. A part's own charset (`Content-Type: text/plain; charset=...` inside the
 * body, which browsers, FormData and the usual HTTP libraries never send) is still Busboy's to
 * read: its events do not say which parts had one.
 *
 * Busboy directly rather than @fastify/multipart: the plugin serves files and temporary storage,
 * which Siteverify never accepts, and adds three hooks to every request of its scope (a
 * measurable share of a Siteverify call, multipart or not).
 */
export function acceptMultipartFields(app: FastifyInstance, limits: MultipartLimits): void {
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (request, body, done) => {
    // A body of no bytes (sent chunked, so that its length was not known beforehand) is no body.
    if (body.length === 0) {
      done(null, undefined)
      return
    }
    const text = readUtf8Body(request.headers['content-type'], body as Buffer)
    if (text instanceof ApiError) {
      done(text, undefined)
      return
    }
    let parser: BusboyInstance
    try {
      parser = new Busboy({ headers: request.headers as BusboyHeaders, limits: { ...limits, files: 0 } })
    } catch {
      done(refusal('The multipart body has no boundary.'), undefined)
      return
    }
    const fields: Record<string, string> = {}
    let isSettled = false
    const settle = (error: Error | null) => {
      if (isSettled) return
      isSettled = true
      if (error === null) done(null, fields)
      else done(error, undefined)
    }
    parser.on('field', (name: string, value: string, isNameTruncated: boolean, isValueTruncated: boolean) => {
      if (isNameTruncated || isValueTruncated) settle(refusal(`The field ${name} is too large.`))
      // As in a form-urlencoded body: a field sent twice is ambiguous, not "the last one wins".
      else if (Object.hasOwn(fields, name)) settle(refusal(`The field ${name} is sent more than once.`))
      else fields[name] = value
    })
    parser.on('file', (_name: string, stream: NodeJS.ReadableStream) => {
      stream.resume()
      settle(refusal('Files are not accepted.'))
    })
    parser.on('filesLimit', () => settle(refusal('Files are not accepted.')))
    parser.on('fieldsLimit', () => settle(refusal('Too many fields.')))
    parser.on('error', () => settle(refusal('The multipart body is malformed.')))
    parser.on('finish', () => settle(null))
    parser.end(body)
  })
}
