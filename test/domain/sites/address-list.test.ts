import { randomInt } from 'node:crypto'
import { BlockList, isIP } from 'node:net'
import { describe, expect, it } from 'vitest'
import { isAddressListed } from '../../../src/domain/sites/address-list.js'

/**
 * Node's BlockList, which tries every rule in turn: slow, and the reference the binary search must
 * agree with, except where BlockList reads an IPv4 client as its IPv4-mapped IPv6 form (so that
 * ::/24 held every IPv4 address): this matcher checks IPv4 clients against IPv4 entries only, and
 * the lists refuse IPv6 ranges around ::ffff:0:0/96 (normalizeAddressEntry).
 */
function referenceOf(entries: readonly string[]): BlockList {
  const list = new BlockList()
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/')
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6'
    if (prefix === undefined) list.addAddress(address, family)
    else list.addSubnet(address, Number(prefix), family)
  }
  return list
}

const randomIpv4 = (first: number) => `${first}.${randomInt(4)}.${randomInt(256)}.${randomInt(256)}`
const randomIpv6 = () => `2001:db8:${randomInt(4).toString(16)}:${randomInt(65_536).toString(16)}::${randomInt(65_536).toString(16)}`

describe('matching an address list', () => {
  it('agrees with node\'s BlockList on nested, touching and separate ranges of both families (none around the IPv4-mapped range)', () => {
    const entries = [
      '10.0.0.0/16', '10.0.1.0/24', '10.0.2.7', '10.1.0.0/24', '10.1.1.0/24', '10.3.255.255', '10.2.128.0/17',
      '2001:db8::/48', '2001:db8::/64', '2001:db8:1:8000::/33', '2001:db8:3::1',
    ]
    const reference = referenceOf(entries)
    for (let round = 0; round < 2_000; round++) {
      const address = round % 2 === 0 ? randomIpv4(10) : randomIpv6()
      expect(isAddressListed(entries, address), address).toBe(reference.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6'))
    }
  })

  it('matches the edges of a range and not one past them', () => {
    const entries = ['198.51.100.0/24', '2001:db8:ffff::/48']
    expect(isAddressListed(entries, '198.51.100.0')).toBe(true)
    expect(isAddressListed(entries, '198.51.100.255')).toBe(true)
    expect(isAddressListed(entries, '198.51.99.255')).toBe(false)
    expect(isAddressListed(entries, '198.51.101.0')).toBe(false)
    expect(isAddressListed(entries, '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff')).toBe(true)
    expect(isAddressListed(entries, '2001:db9::')).toBe(false)
    // An IPv4 address never matches an IPv6 range, nor the other way round, but its mapped form is itself.
    expect(isAddressListed(['::/0'], '198.51.100.1')).toBe(false)
    expect(isAddressListed(['0.0.0.0/0'], '2001:db8::1')).toBe(false)
    expect(isAddressListed(entries, '::ffff:198.51.100.77')).toBe(true)
    expect(isAddressListed(entries, 'not an address')).toBe(false)
  })

  it('reads only what node reads as an address', () => {
    const everything = ['0.0.0.0/0', '::/0']
    for (const text of ['1.2.3.4', '255.255.255.255', '::1', '2001:db8::1%eth0', '::ffff:1.2.3.4', '::FFFF:1.2.3.4', '::ffff:1.2.3', '::ffff:01.2.3.4', '::ffff:', '::ffff:1.2.3.4.5', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1.2.3.256', '1..3.4', '1.2.3.4 ', '', 'x', '1.2.3.-4', '2001:db8:::1']) {
      expect(isAddressListed(everything, text), JSON.stringify(text)).toBe(isIP(text) !== 0)
    }
  })
})
