import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import net, { type AddressInfo } from 'node:net'
import { Redis } from 'ioredis'

/** The median; of an even count, the mean of the two middle values. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

/** Whether something accepts TCP connections at the URL's host and port (defaultPort when it names none). */
export function isPortOpen(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: port === '' ? defaultPort : Number(port) })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** A TCP port nobody listens on now, on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * A private redis-server (no persistence) on a free port, so that a benchmark neither reads nor
 * clears anybody else's keys; undefined when redis-server is not on PATH or does not come up.
 */
export async function startPrivateRedis(): Promise<{ url: string; process: ChildProcess } | undefined> {
  const port = await freePort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  // It must not keep the script alive once the script is done (the detection run printed its
  // table and then never ended); the caller kills it at exit.
  child.unref()
  const failed = await Promise.race([once(child, 'error').then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 300))])
  if (failed) return undefined
  const url = `redis://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 50; attempt++) {
    const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.ping()
      client.disconnect()
      return { url, process: child }
    } catch {
      client.disconnect()
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  child.kill()
  return undefined
}
