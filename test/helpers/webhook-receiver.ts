import http, { type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders
  /** The body exactly as received, for signature checks. */
  body: string
}

/**
 * What the receiver does with the next requests: answer with a status (after `delayMs`; with
 * `bodyOpenMs`, its headers at once and the end of its body that much later), or never answer.
 */
export type ReceiverBehaviour = { status: number; delayMs?: number; bodyOpenMs?: number } | 'hang'

export interface WebhookReceiver {
  url: string
  received: ReceivedWebhook[]
  /** The most requests it held at once (from their arrival to the end of their answer). */
  readonly mostInFlight: number
  behave(behaviour: ReceiverBehaviour): void
  /** The n-th request (0-based), waiting for it up to timeoutMs. */
  waitForRequest(index?: number, timeoutMs?: number): Promise<ReceivedWebhook>
  close(): Promise<void>
}

/** A real HTTP receiver on a random loopback port that records every request it gets. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = []
  const waiters: (() => void)[] = []
  let behaviour: ReceiverBehaviour = { status: 204 }
  let inFlight = 0
  let mostInFlight = 0
  const server = http.createServer((request, response) => {
    inFlight += 1
    mostInFlight = Math.max(mostInFlight, inFlight)
    response.on('close', () => {
      inFlight -= 1
    })
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') })
      for (const wake of waiters.splice(0)) wake()
      if (behaviour === 'hang') return
      const { status, delayMs, bodyOpenMs } = behaviour
      if (bodyOpenMs !== undefined) {
        response.writeHead(status).write('working on it')
        setTimeout(() => response.end(), bodyOpenMs).unref()
        return
      }
      setTimeout(() => response.writeHead(status).end('thanks'), delayMs ?? 0)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks/tollgate`,
    received,
    get mostInFlight() {
      return mostInFlight
    },
    behave(next) {
      behaviour = next
    },
    async waitForRequest(index = 0, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs
      while (received[index] === undefined) {
        if (Date.now() > deadline) throw new Error(`the receiver got no request #${index} within ${timeoutMs} ms`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 50)
        })
      }
      return received[index]
    },
    close() {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A loopback port where nothing listens: bound once, then released. */
export async function findClosedPort(): Promise<number> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
