import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A site on another origin than the service: its own little server, reached as `localhost` while
 * the service is `127.0.0.1` (both on loopback: Chromium forbids a page from a wider address space
 * to load from loopback). It serves `pages` by path and records what its forms post to /order.
 */
export interface Shop {
  origin: string
  server: Server
  /** The fields of every form posted to /order, in order. */
  orders: Record<string, string>[]
}

export async function startShop(pages: Record<string, string>): Promise<Shop> {
  const orders: Record<string, string>[] = []
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://shop').pathname
    if (request.method === 'POST' && path === '/order') {
      let body = ''
      request.setEncoding('utf8')
      request.on('data', (chunk: string) => (body += chunk))
      request.on('end', () => {
        orders.push(Object.fromEntries(new URLSearchParams(body)))
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<p id="ordered">Thank you</p>')
      })
      return
    }
    if (path === '/favicon.ico') return void response.writeHead(204).end()
    const page = pages[path]
    if (page === undefined) return void response.writeHead(404).end()
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { origin: `http://localhost:${(server.address() as AddressInfo).port}`, server, orders }
}
