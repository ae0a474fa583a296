import { describe, expect, it } from 'vitest'
import { findProvider, hostingProviders, vpnProviders } from '../../../src/domain/network/provider-catalogue.js'

describe('provider catalogue', () => {
  it('recognises hosting networks by number', () => {
    expect(findProvider(hostingProviders, { number: 16509, organization: 'Amazon.com, Inc.' })).toBe('Amazon Web Services')
    expect(findProvider(hostingProviders, { number: 14061, organization: 'DigitalOcean, LLC' })).toBe('DigitalOcean')
    expect(findProvider(hostingProviders, { number: 24940, organization: 'Hetzner Online GmbH' })).toBe('Hetzner')
  })

  it('recognises hosting networks by organization name when the number is not listed', () => {
    expect(findProvider(hostingProviders, { number: 64512, organization: 'Hetzner Online GmbH' })).toBe('Hetzner')
    expect(findProvider(hostingProviders, { number: 64512, organization: 'Example Hosting Ltd' })).toBe('hosting provider')
    expect(findProvider(hostingProviders, { number: 64512, organization: 'ACME Data Centre BV' })).toBe('hosting provider')
  })

  it('does not take access providers for hosting', () => {
    for (const organization of ['Deutsche Telekom AG', 'Comcast Cable Communications, LLC', 'OVH SAS', 'Subex Azure Limited']) {
      expect(findProvider(hostingProviders, { number: 64512, organization }), organization).toBeUndefined()
    }
  })

  it('recognises VPN providers by number and by name', () => {
    expect(findProvider(vpnProviders, { number: 9009, organization: 'M247 Europe SRL' })).toBe('M247 (VPN hosting)')
    expect(findProvider(vpnProviders, { number: 39351, organization: '31173 Services AB' })).toBe('Mullvad (31173 Services)')
    expect(findProvider(vpnProviders, { number: 64512, organization: 'Surfshark Ltd' })).toBe('Surfshark')
    expect(findProvider(vpnProviders, { number: 64512, organization: 'VPN INFRAESTRUTURA DE REDES LTDA.' })).toBeUndefined()
  })
})
