import type { FastifyRequest, FastifyServerOptions } from 'fastify'
import { stdSerializers } from 'pino'

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    return text
  }
}

/**
 * Whether a URL's query string may hold a site's secret key: reCAPTCHA's clients may send it in the
 * query of a Siteverify POST, and createAssessment's as `?key=`. Judged on the decoded text, so that
 * neither a percent-escaped path that still reaches Siteverify (`/site%76erify`) nor a near miss
 * that answers 404 (`/assessment?key=`) writes it out.
 */
function mayHoldSecret(path: string, query: string): boolean {
  return /siteverify|\/assessments/i.test(decoded(path)) || /(?:^|&)\s*(?:secret|key)\s*=/i.test(decoded(query))
}

/**
 * A request as its log lines show it (LOG_REQUESTS, errors): Fastify's own fields, with the query
 * string left out wherever it may hold a secret key.
 */
export function serializeRequest(request: FastifyRequest) {
  const queryAt = request.url.indexOf('?')
  const hidesQuery = queryAt >= 0 && mayHoldSecret(request.url.slice(0, queryAt), request.url.slice(queryAt + 1))
  return {
    method: request.method,
    url: hidesQuery ? `${request.url.slice(0, queryAt)}?(query not logged)` : request.url,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket.remotePort,
  }
}

/**
 * An error as its log lines show it: pino's fields, without the `rawPacket` that Node's HTTP
 * parser errors carry (the bytes received, with whatever cookies, API keys or secrets they held),
 * and of the Redis command that ioredis attaches to a reply error only its name: its arguments
 * hold keys and values, and AUTH's (or HELLO's) the password.
 */
export function serializeError(error: Error): ReturnType<typeof stdSerializers.err> {
  const { rawPacket: _rawPacket, command, ...serialized } = stdSerializers.err(error) as ReturnType<typeof stdSerializers.err> & { rawPacket?: unknown; command?: unknown }
  const name = (command as { name?: unknown } | undefined)?.name
  return command === undefined ? serialized : { ...serialized, command: typeof name === 'string' ? { name } : '(not logged)' }
}

/** The logger options with serializeRequest and serializeError, unless they name serializers of their own. */
export function withRequestSerializer(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (typeof logger !== 'object') return logger
  return { ...logger, serializers: { req: serializeRequest, err: serializeError, ...logger.serializers } }
}
