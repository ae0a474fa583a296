import { afterEach, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../../../src/app.js'
import { loadConfig } from '../../../src/config.js'
import { createKeyRing } from '../../../src/secret.js'
import { openMemoryStore } from '../../../src/storage/memory/memory-store.js'
import { openTestDatabase } from '../../helpers/storage.js'
import { TEST_SECRET } from '../../helpers/test-app.js'

// The risk model judges request.ip; these tests pin down that request.ip is the client behind a
// configured proxy, and never an address a client wrote into X-Forwarded-For itself.
let app: App | undefined

async function buildWithTrustProxy(trustProxy: string | undefined): Promise<App> {
  const config = loadConfig({ NODE_ENV: 'test', TOLLGATE_SECRET: TEST_SECRET, ...(trustProxy === undefined ? {} : { TRUST_PROXY: trustProxy }) })
  const { database } = await openTestDatabase('pglite')
  const built = await buildApp({ config, storage: { database, keyValue: openMemoryStore() }, keyRing: createKeyRing(TEST_SECRET), logger: false })
  built.get('/client-address-probe', async (request) => ({ ip: request.ip }))
  await built.ready()
  app = built
  return built
}

async function clientIpSeenBy(target: App, remoteAddress: string, forwardedFor: string | undefined): Promise<string> {
  const response = await target.inject({
    method: 'GET',
    url: '/client-address-probe',
    remoteAddress,
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  })
  return response.json<{ ip: string }>().ip
}

afterEach(async () => {
  await app?.close()
  app = undefined
})

describe('client address and TRUST_PROXY', () => {
  it('ignores X-Forwarded-For when no proxy is trusted', async () => {
    const target = await buildWithTrustProxy(undefined)
    expect(await clientIpSeenBy(target, '127.0.0.1', '8.8.8.8')).toBe('127.0.0.1')
  })

  it('honours X-Forwarded-For from the proxy TRUST_PROXY names', async () => {
    const target = await buildWithTrustProxy('127.0.0.1')
    expect(await clientIpSeenBy(target, '127.0.0.1', '8.8.8.8')).toBe('8.8.8.8')
    expect(await clientIpSeenBy(target, '127.0.0.1', '2600:1f18::1')).toBe('2600:1f18::1')
  })

  it('ignores X-Forwarded-For from any other peer', async () => {
    const target = await buildWithTrustProxy('127.0.0.1')
    expect(await clientIpSeenBy(target, '203.0.113.9', '8.8.8.8')).toBe('203.0.113.9')
  })

  it('takes the nearest untrusted hop, so a client cannot prepend an address of its choice', async () => {
    const target = await buildWithTrustProxy('10.0.0.0/8')
    // The client wrote 1.1.1.1 itself; the trusted proxy 10.0.0.2 appended the real peer 8.8.8.8.
    expect(await clientIpSeenBy(target, '10.0.0.2', '1.1.1.1, 8.8.8.8')).toBe('8.8.8.8')
  })
})
