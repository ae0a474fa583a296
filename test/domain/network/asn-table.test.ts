import { describe, expect, it } from 'vitest'
import { buildAsnTable } from '../../../src/domain/network/asn-table.js'
import { parseAddress } from '../../../src/domain/network/ip-address.js'

const ipv4 = [
  '16777216,16777471,13335,"Cloudflare, Inc."',
  '134744064,134744319,15169,Google LLC',
  'garbage line',
  '134743040,134743295,64500,"Quoted ""Name"" Ltd"',
  '167772160,167772415,0,Not routed',
  '',
].join('\n')
const ipv6 = [
  `${0x2a001450n << 96n},${(0x2a001450n << 96n) + (1n << 96n) - 1n},15169,Google LLC`,
  `${0x20010db8n << 96n},${(0x20010db8n << 96n) + 0xffffn},64501,Doc Net`,
].join('\n')

const find = (raw: string) => table.find(parseAddress(raw) ?? (() => { throw new Error(raw) })())
const table = buildAsnTable(ipv4, ipv6)

describe('buildAsnTable', () => {
  it('finds the range covering an IPv4 address, both ends inclusive', () => {
    expect(find('8.8.8.0')).toEqual({ number: 15169, organization: 'Google LLC' })
    expect(find('8.8.8.255')).toEqual({ number: 15169, organization: 'Google LLC' })
    expect(find('1.0.0.1')).toEqual({ number: 13335, organization: 'Cloudflare, Inc.' })
  })

  it('finds nothing between and outside ranges', () => {
    expect(find('8.8.9.0')).toBeUndefined()
    expect(find('0.255.255.255')).toBeUndefined()
    expect(find('200.0.0.1')).toBeUndefined()
  })

  it('unquotes organizations, sorts unsorted input and skips malformed lines', () => {
    expect(find('8.8.4.4')).toEqual({ number: 64500, organization: 'Quoted "Name" Ltd' })
    expect(table.rangeCounts).toEqual({ ipv4: 4, ipv6: 2 })
  })

  it('reports AS0 (not routed) as no autonomous system', () => {
    expect(find('10.0.0.1')).toBeUndefined()
  })

  it('finds IPv6 ranges', () => {
    expect(find('2a00:1450:4001:82b::200e')).toEqual({ number: 15169, organization: 'Google LLC' })
    expect(find('2001:db8::ffff')).toEqual({ number: 64501, organization: 'Doc Net' })
    expect(find('2001:db8::1:0')).toBeUndefined()
    expect(find('2a00:1451::')).toBeUndefined()
  })
})
