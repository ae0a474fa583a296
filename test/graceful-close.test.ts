import net from 'node:net'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { buildTestApp } from './helpers/test-app.js'

/** Whether the promise settles within `ms`. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))])
}

/** Opens a TCP connection to the service and sends nothing, as a browser's preconnect does. */
async function openSilentConnection(port: number): Promise<{ closedByServer: Promise<void> }> {
  const socket = net.connect({ host: '127.0.0.1', port })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  return { closedByServer: new Promise((resolve) => socket.once('close', () => resolve())) }
}

describe('closing the service', () => {
  it('ends a keep-alive connection whose answer began before the close once the answer is out, instead of waiting for keepAliveTimeout', async () => {
    let finishBody: () => void = () => {}
    const bodyMayFinish = new Promise<void>((resolve) => (finishBody = resolve))
    const service = await buildTestApp({
      beforeReady: (app) => {
        // A download whose head and first bytes leave before the close, and its end after.
        app.get('/long-download-for-test', (_request, reply) => {
          const body = new PassThrough()
          body.write('first part;')
          void bodyMayFinish.then(() => body.end('last part'))
          return reply.type('text/plain').send(body)
        })
      },
    })
    await service.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = service.app.server.address() as net.AddressInfo
    const kept = await openKeepAlive(port)
    const download = kept.get('/long-download-for-test')
    const head = await kept.received((text) => text.includes('first part;'))
    // Chunked, and kept alive: the head left before the close, which cannot change it any more.
    expect(head).toMatch(/^transfer-encoding: chunked/im)
    expect(head).not.toMatch(/^connection: close/im)

    const closed = service.close()
    // Let the close begin (it ends the idle connections then; this one is not idle).
    await new Promise((resolve) => setTimeout(resolve, 200))
    finishBody()
    expect(await download).toMatch(/last part/)
    // Left open, the connection would hold the close for keepAliveTimeout (72 s), past the shutdown's grace.
    expect(await settlesWithin(kept.closed, 10_000)).toBe(true)
    expect(await settlesWithin(closed, 10_000)).toBe(true)
  }, 60_000)

  it('ends connections that never sent a request instead of waiting for them', async () => {
    const service = await buildTestApp()
    await service.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = service.app.server.address() as net.AddressInfo
    const silent = await openSilentConnection(port)
    // A keep-alive connection that has had its answer is idle: it is ended too.
    const answered = await fetch(`http://127.0.0.1:${port}/health`)
    expect(answered.status).toBe(200)

    await service.close()
    await silent.closedByServer
    // Left waiting, the silent connection would hold the close until the request timeout (30 s)
    // ends it, and the idle one until keepAliveTimeout (72 s): past this test's time either way,
    // which starting the embedded database on a loaded host must not eat into (CI timed out so at 10 s).
  }, 25_000)
})

/** A keep-alive connection of its own, on which requests are sent one after another. */
async function openKeepAlive(port: number): Promise<{
  get(path: string): Promise<string>
  /** Everything the connection received so far, once `test` holds for it. */
  received(test: (text: string) => boolean): Promise<string>
  closed: Promise<void>
}> {
  const socket = net.connect({ host: '127.0.0.1', port })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  let transcript = ''
  const waiters = new Set<() => void>()
  socket.on('data', (chunk: Buffer) => {
    transcript += chunk.toString()
    for (const check of waiters) check()
  })
  const received = (test: (text: string) => boolean) =>
    new Promise<string>((resolve) => {
      const check = () => {
        if (!test(transcript)) return
        waiters.delete(check)
        resolve(transcript)
      }
      waiters.add(check)
      check()
    })
  /** Whether `text` (from the start of an answer) holds a whole answer: by its Content-Length, or chunked to its last chunk. */
  const isWhole = (text: string) => {
    const headEnd = text.indexOf('\r\n\r\n')
    if (headEnd < 0) return false
    const head = text.slice(0, headEnd)
    const body = text.slice(headEnd + 4)
    if (/^transfer-encoding: chunked/im.test(head)) return body.endsWith('0\r\n\r\n')
    return Buffer.byteLength(body) >= Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0)
  }
  return {
    closed,
    received,
    async get(path) {
      const from = transcript.length
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n`)
      return (await received((text) => isWhole(text.slice(from)))).slice(from)
    },
  }
}

describe('draining before the close (SHUTDOWN_DELAY)', () => {
  it('answers /ready 503 while serving in-flight and new requests, closes keep-alive connections after their answer, then stops', async () => {
    let finishSlow: () => void = () => {}
    const slowMayFinish = new Promise<void>((resolve) => (finishSlow = resolve))
    const service = await buildTestApp({
      beforeReady: (app) => {
        app.get('/slow-for-test', async () => {
          await slowMayFinish
          return { finished: true }
        })
      },
    })
    await service.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = service.app.server.address() as net.AddressInfo
    const base = `http://127.0.0.1:${port}`
    expect((await fetch(`${base}/ready`)).status).toBe(200)
    const kept = await openKeepAlive(port)
    expect(await kept.get('/health')).not.toMatch(/^connection: close/im)
    const inFlight = fetch(`${base}/slow-for-test`)
    // Let the request arrive before the drain starts.
    await new Promise((resolve) => setTimeout(resolve, 200))

    const drained = service.app.drain(1_500)
    const ready = await fetch(`${base}/ready`)
    expect(ready.status).toBe(503)
    expect(await ready.json()).toMatchObject({ status: 'draining', checks: { database: { status: 'up' }, redis: { status: 'up' } } })
    // A new request is served, and told its connection closes.
    const fresh = await fetch(`${base}/health`)
    expect(fresh.status).toBe(200)
    expect(fresh.headers.get('connection')).toBe('close')
    // The keep-alive connection's next request is answered, then the connection is closed.
    expect(await kept.get('/health')).toMatch(/^HTTP\/1\.1 200[\s\S]*^connection: close/im)
    await kept.closed
    // The request in flight when the drain began finishes.
    finishSlow()
    const slow = await inFlight
    expect(slow.status).toBe(200)
    expect(await slow.json()).toEqual({ finished: true })

    await drained
    await service.close()
    // Then the listener is closed.
    await expect(fetch(`${base}/health`)).rejects.toThrow()
    // Building the app (the embedded database's start) takes most of the time on a loaded host.
  }, 90_000)

  it('closes the connection of an answer that was ready but not yet sent when the drain began (the in-process store sends answers at the end of the turn)', async () => {
    const service = await buildTestApp({
      beforeReady: (app) => {
        // The answer is ready (its onSend hooks have run) before the drain begins, in the same turn.
        app.get('/drain-after-answer-for-test', (_request, reply) => {
          process.nextTick(() => void app.drain(0))
          return reply.send({ answered: true })
        })
      },
    })
    try {
      await service.app.listen({ port: 0, host: '127.0.0.1' })
      const { port } = service.app.server.address() as net.AddressInfo
      const kept = await openKeepAlive(port)
      // Left open, the connection would hold the close for keepAliveTimeout (72 s), past the
      // shutdown's grace: the process would be killed with its logs unwritten.
      expect(await kept.get('/drain-after-answer-for-test')).toMatch(/^HTTP\/1\.1 200[\s\S]*^connection: close/im)
      await kept.closed
    } finally {
      await service.close()
    }
  }, 90_000)
})
