import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface SessionProxy {
  /** The proxy's base URL: the session talks to the service through it. */
  url: string
  close(): Promise<void>
}

/**
 * A reverse proxy on a loopback port of its own, standing in for the load balancer in front of
 * Tollgate: it appends the session's client address to X-Forwarded-For, and the service (with
 * TRUST_PROXY=127.0.0.1) takes that address as the client's. So every session of the evaluation
 * has an address of its own, as real visitors do, though all run on this machine. Headers and
 * bodies pass through unchanged; the Host header keeps the proxy's address, like an L7 proxy.
 */
export async function startSessionProxy(servicePort: number, clientAddress: string): Promise<SessionProxy> {
  const server = http.createServer((request, response) => {
    const forwarded = request.headers['x-forwarded-for']
    const headers = { ...request.headers, 'x-forwarded-for': forwarded === undefined ? clientAddress : `${String(forwarded)}, ${clientAddress}` }
    const upstream = http.request({ host: '127.0.0.1', port: servicePort, method: request.method, path: request.url, headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(response)
    })
    upstream.on('error', () => {
      response.writeHead(502)
      response.end()
    })
    request.pipe(upstream)
  })
  // Longer than any client waits between requests (a solve), so no client reuses a socket as it closes.
  server.keepAliveTimeout = 120_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
