import type { LookupAddress } from 'node:dns'
import net from 'node:net'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGuardedLookup, createWebhookAgent, RefusedAddressError, type Resolve } from '../../src/webhooks/guarded-agent.js'

function lookupWith(resolve: Resolve, hostname: string, all: boolean): Promise<LookupAddress[] | string> {
  const lookup = createGuardedLookup(resolve)
  return new Promise((fulfil, reject) => {
    lookup(hostname, { all }, (error, address) => (error === null ? fulfil(address) : reject(error)))
  })
}

describe('createGuardedLookup', () => {
  it('passes public answers through, in both lookup shapes', async () => {
    const resolve: Resolve = async () => [{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1::', family: 6 }]
    expect(await lookupWith(resolve, 'example.com', true)).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::', family: 6 },
    ])
    expect(await lookupWith(resolve, 'example.com', false)).toBe('93.184.216.34')
  })

  it('refuses a name when any of its addresses is not public', async () => {
    const resolve: Resolve = async () => [{ address: '93.184.216.34', family: 4 }, { address: '::ffff:10.0.0.7', family: 6 }]
    const refusal = lookupWith(resolve, 'mixed.example', true)
    await expect(refusal).rejects.toMatchObject({ address: '::ffff:10.0.0.7', message: 'mixed.example resolves to a private address' })
  })

  it('checks every connection anew, so a rebinding name is refused once it turns private', async () => {
    const answers = ['93.184.216.34', '169.254.169.254']
    const resolve: Resolve = async () => [{ address: answers.shift() ?? '127.0.0.1', family: 4 }]
    expect(await lookupWith(resolve, 'rebind.example', false)).toBe('93.184.216.34')
    await expect(lookupWith(resolve, 'rebind.example', false)).rejects.toBeInstanceOf(RefusedAddressError)
  })

  it('passes resolver failures on', async () => {
    const resolve: Resolve = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' })
    }
    await expect(lookupWith(resolve, 'nowhere.invalid', false)).rejects.toMatchObject({ code: 'ENOTFOUND' })
  })
})

describe('createWebhookAgent', () => {
  let server: net.Server
  let port: number
  let connections = 0
  beforeAll(async () => {
    server = net.createServer((socket) => {
      connections += 1
      socket.destroy()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as net.AddressInfo).port
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it.each(['127.0.0.1', '[::ffff:127.0.0.1]', 'localhost'])('refuses %s at connect time: no connection is made', async (host) => {
    const agent = createWebhookAgent({ allowPrivateAddresses: false, connectTimeoutMs: 2_000 })
    const before = connections
    try {
      const error: unknown = await request(`http://${host}:${port}/`, { method: 'POST', body: '{}', dispatcher: agent }).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(RefusedAddressError)
      expect((error as RefusedAddressError).range).toBe('loopback')
      expect(connections).toBe(before)
    } finally {
      await agent.close()
    }
  })

  it('refuses a name whose resolver answers the metadata address', async () => {
    const agent = createWebhookAgent({
      allowPrivateAddresses: false,
      connectTimeoutMs: 2_000,
      resolve: async () => [{ address: '169.254.169.254', family: 4 }],
    })
    try {
      await expect(request('https://hooks.example.com/', { method: 'POST', dispatcher: agent })).rejects.toMatchObject({ range: 'metadata' })
    } finally {
      await agent.close()
    }
  })

  it('connects to loopback when private addresses are allowed', async () => {
    const agent = createWebhookAgent({ allowPrivateAddresses: true, connectTimeoutMs: 2_000 })
    const before = connections
    try {
      await expect(request(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}', dispatcher: agent })).rejects.toThrow()
      expect(connections).toBe(before + 1)
    } finally {
      await agent.close()
    }
  })
})
