import ipaddr from 'ipaddr.js'
import { describe, expect, it } from 'vitest'
import { canonicalAddress } from '../../../src/domain/network/address-forms.js'

describe('canonicalAddress, the spelling the verification log keeps under LOG_CLIENT_IP=full', () => {
  it('keeps a dotted quad as it is and writes IPv4-mapped, capitalised or uncompressed IPv6 in one spelling', () => {
    expect(canonicalAddress('203.0.113.7')).toBe('203.0.113.7')
    expect(canonicalAddress('::ffff:203.0.113.7')).toBe('203.0.113.7')
    expect(canonicalAddress('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1')
    expect(canonicalAddress('2001:0db8::0001')).toBe('2001:db8::1')
  })

  it('keeps text that is not an address, and dotted quads that are not canonical, as sockets never write them', () => {
    expect(canonicalAddress('unknown')).toBe('unknown')
    expect(canonicalAddress('1.2.3')).toBe('1.2.3')
    expect(canonicalAddress('256.1.1.1')).toBe('256.1.1.1')
    expect(canonicalAddress('01.2.3.4')).toBe('01.2.3.4')
  })

  it('spells every IPv4 address as ipaddr.js does', () => {
    for (let round = 0; round < 2000; round++) {
      const bytes = Array.from({ length: 4 }, () => Math.floor(Math.random() * 256))
      const text = bytes.join('.')
      expect(canonicalAddress(text)).toBe(ipaddr.fromByteArray(bytes).toString())
    }
  })
})
