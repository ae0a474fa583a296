import net from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWebhookAgent, RefusedAddressError } from '../../src/webhooks/guarded-agent.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { blockedEvent, createWebhookSite } from '../helpers/webhook-site.js'

/**
 * With private webhooks not allowed (production's default), a webhook to a loopback address is
 * refused when connecting: a listening socket on that address never sees a connection.
 */
describe('webhooks with private addresses not allowed', () => {
  let service: TestApp
  let server: net.Server
  let port: number
  let connections = 0
  beforeAll(async () => {
    service = await buildTestApp({ config: { allowPrivateWebhooks: false } })
    server = net.createServer((socket) => {
      connections += 1
      socket.destroy()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as net.AddressInfo).port
  })
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await service.close()
  })

  async function deliverTo(url: string) {
    const site = await createWebhookSite(service.app, { webhookUrl: url, secret: 'a secret' })
    service.app.events.emit('verification.blocked', blockedEvent(site.id))
    await service.app.webhooks.settle()
    return service.app.webhooks.deliveries.listRecent(site.id, 10)
  }

  it('refuses a hostname that resolves to loopback (localhost), at connect time', async () => {
    expect(await deliverTo(`https://localhost:${port}/hook`)).toMatchObject([
      { outcome: 'refused', statusCode: null, error: 'refused: localhost resolves to a loopback address' },
    ])
    expect(connections).toBe(0)
  })

  it('refuses a loopback literal and the metadata address', async () => {
    expect(await deliverTo(`https://127.0.0.1:${port}/hook`)).toMatchObject([{ outcome: 'refused', error: expect.stringMatching(/loopback/) }])
    expect(await deliverTo(`https://[::ffff:127.0.0.1]:${port}/hook`)).toMatchObject([{ outcome: 'refused', error: expect.stringMatching(/loopback/) }])
    expect(await deliverTo('https://169.254.169.254/latest/meta-data/')).toMatchObject([{ outcome: 'refused', error: expect.stringMatching(/metadata/) }])
    expect(connections).toBe(0)
  })

  it('refuses plain http', async () => {
    expect(await deliverTo(`http://localhost:${port}/hook`)).toMatchObject([{ outcome: 'refused', error: 'the webhook URL must use https' }])
    expect(connections).toBe(0)
  })

  it('counts refusals under their own outcome', async () => {
    const metrics = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toMatch(/^tollgate_webhook_deliveries_total\{outcome="refused"\} [1-9]\d*$/m)
  })
})

describe('webhooks with private addresses allowed (development)', () => {
  it('connect to a loopback receiver, and refuse a name that resolves to the metadata address at connect time', async () => {
    let connections = 0
    const sockets = new Set<net.Socket>()
    const server = net.createServer((socket) => {
      connections += 1
      sockets.add(socket)
      socket.once('data', () => socket.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n'))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as net.AddressInfo
    const agent = createWebhookAgent({
      allowPrivateAddresses: true,
      connectTimeoutMs: 2_000,
      resolve: async (hostname) => [{ address: hostname === 'metadata.test' ? '169.254.169.254' : '127.0.0.1', family: 4 }],
    })
    try {
      const local = await request(`http://receiver.test:${port}/hook`, { method: 'POST', dispatcher: agent, body: '{}' })
      expect(local.statusCode).toBe(204)
      await local.body.dump()
      expect(connections).toBe(1)
      await expect(request(`http://metadata.test:${port}/latest/meta-data/`, { dispatcher: agent })).rejects.toBeInstanceOf(RefusedAddressError)
      await expect(request('http://169.254.169.254/latest/meta-data/', { dispatcher: agent })).rejects.toThrow(/metadata/)
      expect(connections).toBe(1)
    } finally {
      await agent.close()
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})
