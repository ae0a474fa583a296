import type { IncomingMessage } from 'node:http'
import { compile } from '@fastify/proxy-addr'
import type { Config } from '../config.js'

/**
 * What an incoming X-Request-Id may be to be kept: the ids proxies make (nginx's $request_id, a
 * UUID, a trace id), and nothing a log reader could trip on (no spaces, quotes or line breaks).
 */
const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Reads the X-Request-Id that a trusted proxy (TRUST_PROXY: the peer, as Fastify trusts it for
 * X-Forwarded-For) sent, when it is well formed; undefined otherwise. It is logged beside the
 * service's own request id (proxyRequestId) so that the proxy's log and the service's can be
 * joined. It does not replace the service's id: that one is the verification log's primary key
 * and the reference a visitor quotes, a UUID the service makes, which a header passed through from
 * a client must not choose.
 */
export function proxyRequestIdReader(trustProxy: Config['trustProxy']): ((request: IncomingMessage) => string | undefined) | undefined {
  const isTrusted = trustedPeerCheck(trustProxy)
  if (isTrusted === undefined) return undefined
  return (request) => {
    const incoming = request.headers['x-request-id']
    return typeof incoming === 'string' && WELL_FORMED_REQUEST_ID.test(incoming) && isTrusted(request.socket.remoteAddress) ? incoming : undefined
  }
}

/**
 * Whether the peer is a proxy TRUST_PROXY trusts (a hop count trusts whoever connects, as this
 * service has it); undefined when none is. A list is compiled by the library Fastify trusts
 * X-Forwarded-For with, so the two agree on every address (an IPv4 proxy seen as ::ffff:10.0.0.5
 * by a dual-stack listener included).
 */
function trustedPeerCheck(trustProxy: Config['trustProxy']): ((address: string | undefined) => boolean) | undefined {
  if (trustProxy === false || trustProxy === 0) return undefined
  if (trustProxy === true || typeof trustProxy === 'number') return () => true
  const isTrusted = compile(trustProxy)
  return (address) => address !== undefined && isTrusted(address, 0)
}
