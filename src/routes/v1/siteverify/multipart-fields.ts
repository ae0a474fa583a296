import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy'
import type { FastifyInstance } from 'fastify'

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
