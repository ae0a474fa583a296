import type { FastifyRequest, FastifyServerOptions } from 'fastify'
import { siteverifyPaths } from './routes/v1/siteverify/index.js'

/**
 * A request as its log lines show it (LOG_REQUESTS, errors): Fastify's own fields, with the query
 * string of Siteverify left out, since reCAPTCHA's clients may send the site's secret key there.
 */
export function serializeRequest(request: FastifyRequest) {
  const queryAt = request.url.indexOf('?')
  const hidesQuery = queryAt >= 0 && siteverifyPaths.includes(request.url.slice(0, queryAt))
  return {
    method: request.method,
    url: hidesQuery ? `${request.url.slice(0, queryAt)}?(query not logged)` : request.url,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket.remotePort,
  }
}

/** The logger options with serializeRequest, unless they name a request serializer of their own. */
export function withRequestSerializer(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (typeof logger !== 'object') return logger
  return { ...logger, serializers: { req: serializeRequest, ...logger.serializers } }
}
