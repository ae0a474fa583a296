import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assessNetwork } from '../../../src/domain/network/assess-network.js'
import { countryOfAddress, profileNetwork } from '../../../src/domain/network/network-profile.js'
import { openNetworkData, TOR_EXIT_LIST_FILE, type LoadedNetworkData } from '../../../src/storage/network-data/open-network-data.js'

// The bundled data changes with every refresh; these addresses belong to networks whose owner
// and country have been stable for many years.
let data: LoadedNetworkData
let dataDirectory: string

beforeAll(async () => {
  dataDirectory = await mkdtemp(join(tmpdir(), 'tollgate-network-'))
  await writeFile(join(dataDirectory, TOR_EXIT_LIST_FILE), '# test list\n185.220.101.1\n2001:67c:e60:c0c:192:42:116:16\n')
  data = await openNetworkData({ dataDirectory })
})

afterAll(async () => {
  await rm(dataDirectory, { recursive: true, force: true })
})

describe('profileNetwork on the bundled data', () => {
  it('gives a cloud address its country, ASN and hosting provider, flagged datacenter_ip', () => {
    const profile = profileNetwork(data, '8.8.8.8')
    expect(profile).toMatchObject({ countryCode: 'US', asn: 15169, asOrganization: 'Google LLC', hostingProvider: 'Google Cloud', isPublic: true })
    expect(assessNetwork(profile)).toEqual(['datacenter_ip'])
  })

  it('recognises IPv6 cloud ranges and IPv4-mapped addresses', () => {
    expect(profileNetwork(data, '2600:1f18::1')).toMatchObject({ asn: 14618, hostingProvider: 'Amazon Web Services' })
    expect(assessNetwork(profileNetwork(data, '2a01:4f8::1'))).toEqual(['datacenter_ip'])
    expect(profileNetwork(data, '::ffff:5.9.0.1')).toMatchObject({ ip: '5.9.0.1', asn: 24940, countryCode: 'DE' })
  })

  it('flags a VPN provider as vpn_detected only', () => {
    const profile = profileNetwork(data, '185.65.134.1')
    expect(profile).toMatchObject({ asn: 39351, vpnProvider: 'Mullvad (31173 Services)', hostingProvider: null })
    expect(assessNetwork(profile)).toEqual(['vpn_detected'])
  })

  it('leaves home broadband addresses unflagged, IPv4 and IPv6', () => {
    for (const ip of ['80.187.100.1', '2003::1']) {
      const profile = profileNetwork(data, ip)
      expect(profile).toMatchObject({ countryCode: 'DE', asn: 3320 })
      expect(assessNetwork(profile)).toEqual([])
    }
    expect(profileNetwork(data, '73.0.0.1')).toMatchObject({ countryCode: 'US', asn: 7922 })
  })

  it('flags addresses on the operator-provided Tor exit list', () => {
    expect(assessNetwork(profileNetwork(data, '185.220.101.1'))).toContain('tor_exit')
    expect(profileNetwork(data, '2001:67c:e60:c0c:192:42:116:16').isTorExit).toBe(true)
    expect(profileNetwork(data, '185.220.101.2').isTorExit).toBe(false)
  })

  it("answers 'XX' and no labels for private, loopback and unparseable addresses", () => {
    for (const ip of ['127.0.0.1', '::1', '10.1.2.3', 'fe80::1', 'not-an-ip']) {
      const profile = profileNetwork(data, ip)
      expect(profile, ip).toMatchObject({ countryCode: 'XX', asn: null, isPublic: false })
      expect(assessNetwork(profile)).toEqual([])
    }
  })

  it("looks the country up alone (countryOfAddress) as the profile has it", () => {
    for (const ip of ['8.8.8.8', '80.187.100.1', '::ffff:5.9.0.1', '2a01:4f8::1', '185.65.134.1', '127.0.0.1', '::1', 'not-an-ip']) {
      expect(countryOfAddress(data, ip), ip).toBe(profileNetwork(data, ip).countryCode)
    }
    expect(countryOfAddress(data, '80.187.100.1')).toBe('DE')
  })

  it('loads a recent database', () => {
    expect(data.asns.rangeCounts.ipv4).toBeGreaterThan(100_000)
    expect(data.asns.rangeCounts.ipv6).toBeGreaterThan(10_000)
    expect(data.builtAt.country.getUTCFullYear()).toBeGreaterThanOrEqual(2025)
  })
})
