import Fastify from 'fastify'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { loadConfig } from '../../src/config.js'

// Forces the one failure the plugin must survive: offline data that cannot be read.
vi.mock('../../src/storage/network-data/open-network-data.js', () => ({
  openSharedNetworkData: () => Promise.reject(new Error('ENOENT: dbip-country.mmdb')),
}))

const { default: networkPlugin } = await import('../../src/plugins/network.js')

describe('network plugin', () => {
  const app = Fastify({ logger: false })
  afterEach(async () => {
    await app.close()
  })

  it('answers an unknown profile instead of failing when the data cannot be read', async () => {
    app.decorate('config', loadConfig({ NODE_ENV: 'test' }))
    await app.register(networkPlugin)
    await app.ready()
    expect(await app.network.profile('5.9.0.1')).toMatchObject({ ip: '5.9.0.1', countryCode: 'XX', asn: null, hostingProvider: null, isPublic: true })
  })
})
