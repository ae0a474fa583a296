import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { buildTestApp } from './helpers/test-app.js'

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
