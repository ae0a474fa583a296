import net from 'node:net'

export interface TcpProxy {
  port: number
  /** Stops listening and cuts every open connection: the service behind looks down. */
  cut(): Promise<void>
  /** Listens again on the same port: the service behind is back. */
  restore(): Promise<void>
  /**
   * The open connections go silent: nothing more passes either way, and nothing closes them (no
   * reset, no end), as when a route drops packets or an address fails over. New connections
   * work as before.
   */
  silence(): void
  close(): Promise<void>
}

/**
 * A TCP relay to a real service, used to take PostgreSQL or Redis "down" for one app without
 * stopping the shared server the other test files use.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>()
  const pairs = new Set<[net.Socket, net.Socket]>()
  let server: net.Server | undefined
  let port = 0

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = net.createServer((client) => {
        const upstream = net.connect(target)
        sockets.add(client).add(upstream)
        const pair: [net.Socket, net.Socket] = [client, upstream]
        pairs.add(pair)
        const drop = () => {
          client.destroy()
          upstream.destroy()
          sockets.delete(client)
          sockets.delete(upstream)
          pairs.delete(pair)
        }
        client.on('error', drop).on('close', drop)
        upstream.on('error', drop).on('close', drop)
        client.pipe(upstream).pipe(client)
      })
      next.once('error', reject)
      next.listen(port, '127.0.0.1', () => {
        port = (next.address() as net.AddressInfo).port
        server = next
        resolve()
      })
    })

  const cut = async () => {
    const current = server
    server = undefined
    for (const socket of sockets) socket.destroy()
    sockets.clear()
    if (current !== undefined) await new Promise<void>((resolve) => current.close(() => resolve()))
  }

  const silence = () => {
    for (const pair of pairs) {
      for (const socket of pair) {
        socket.unpipe()
        socket.pause()
      }
      pairs.delete(pair)
    }
  }

  await listen()
  return { port, cut, restore: listen, silence, close: cut }
}
