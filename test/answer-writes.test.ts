import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deployments, buildTestApp, type TestApp } from './helpers/test-app.js'

/** Sends raw bytes on one connection and collects what comes back until `until` matches. */
async function exchange(port: number, request: string, until: (text: string) => boolean): Promise<string> {
  const socket = net.connect({ host: '127.0.0.1', port })
  let received = ''
  try {
    await new Promise<void>((resolve, reject) => {
      socket.setEncoding('utf8')
      socket.on('data', (chunk: string) => {
        received += chunk
        if (until(received)) resolve()
      })
      socket.once('error', reject)
      socket.once('close', () => reject(new Error(`connection closed after: ${received}`)))
      socket.write(request)
    })
    return received
  } finally {
    socket.destroy()
  }
}

const statusLines = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]))

// On the embedded store the service holds each answer until the end of the event loop's turn and
// sends the turn's answers together (src/app.ts); on Redis it sends each at once. Both must answer
// every request, in order, and fail a request whose answer cannot be written without stopping.
describe.each(deployments.filter((deployment) => deployment.available))('answers on the $name deployment', ({ options }) => {
  let service: TestApp
  let port: number

  beforeAll(async () => {
    service = await buildTestApp({
      ...options,
      beforeReady(app) {
        // A header value Node refuses to write, as a bug of a route could set.
        app.get('/test/refused-header', async (_request, reply) => reply.header('x-broken', 'line\nbreak').send({ ok: true }))
      },
    })
    await service.app.listen({ port: 0, host: '127.0.0.1' })
    port = (service.app.server.address() as net.AddressInfo).port
  })
  afterAll(() => service.close())

  it('answers requests pipelined on one connection, each its own, in the order they were sent', async () => {
    const paths = ['/health', '/no-such-route', '/health', '/api/v1/challenge']
    const request = paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).join('')
    const text = await exchange(port, request, (received) => statusLines(received).length === paths.length && received.endsWith('}'))
    expect(statusLines(text)).toEqual([200, 404, 200, 405])
  })

  it('answers many concurrent requests, every one of them', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => fetch(`http://127.0.0.1:${port}/health`)))
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 50 }, () => 200))
    const ids = new Set(answers.map((answer) => answer.headers.get('x-request-id')))
    expect(ids.size).toBe(50)
  })

  it('fails a request whose answer cannot be written with a 500, and goes on answering', async () => {
    const refused = await fetch(`http://127.0.0.1:${port}/test/refused-header`)
    expect(refused.status).toBe(500)
    expect(refused.headers.get('x-broken')).toBeNull()
    const after = await fetch(`http://127.0.0.1:${port}/health`)
    expect(after.status).toBe(200)
  })
})
