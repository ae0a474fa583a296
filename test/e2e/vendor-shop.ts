import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll } from 'vitest'
import { serviceAndBrowser, type SdkService, type TestBrowser } from './sdk-support.js'

/**
 * A site that moves from Turnstile, reCAPTCHA or hCaptcha to Tollgate by changing the host of its
 * page script: its pages, callbacks and form fields stay as the vendor's documentation wrote
 * them. The site is its own little server on another origin (`localhost`, the service being
 * `127.0.0.1`), which records what its forms post.
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

export function html(body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body>${body}</body></html>`
}

/** A shop's pages, given the service's origin, the demo site's key and a key the service does not know. */
export type ShopPages = (service: string, siteKey: string, unknownKey: string) => Record<string, string>

/**
 * For a describe block: serviceAndBrowser's service and browser, and the shop of `pagesFor`, started
 * before its tests and stopped after them. Read `suite.sdk`, `suite.shop` and `suite.browser` inside the tests.
 */
export function shopServiceAndBrowser(pagesFor: ShopPages): { readonly sdk: SdkService; readonly shop: Shop; readonly browser: TestBrowser } {
  const suite = serviceAndBrowser()
  let shop: Shop | undefined
  beforeAll(async () => {
    shop = await startShop(pagesFor(suite.sdk.origin, suite.sdk.demoSite.siteKey, `tgk_${'A'.repeat(22)}`))
  })
  afterAll(() => {
    shop?.server.close()
  })
  return {
    get sdk() { return suite.sdk },
    get browser() { return suite.browser },
    get shop() {
      if (shop === undefined) throw new Error('the suite has not started: use suite.shop inside tests')
      return shop
    },
  }
}
