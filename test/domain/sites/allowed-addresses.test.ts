import { describe, expect, it } from 'vitest'
import { isAddressAllowed, MAX_ALLOWED_ADDRESSES, normalizeAllowedAddress, normalizeAllowedAddresses } from '../../../src/domain/sites/allowed-addresses.js'

describe('a site address allowlist', () => {
  it('stores addresses and ranges in one canonical form', () => {
    expect(normalizeAllowedAddress(' 203.0.113.7 ')).toEqual({ address: '203.0.113.7' })
    expect(normalizeAllowedAddress('203.0.113.7/32')).toEqual({ address: '203.0.113.7' })
    expect(normalizeAllowedAddress('203.0.113.7/24')).toEqual({ address: '203.0.113.0/24' })
    expect(normalizeAllowedAddress('2001:DB8:0:0::1')).toEqual({ address: '2001:db8::1' })
    expect(normalizeAllowedAddress('2001:db8:aaaa::/33')).toEqual({ address: '2001:db8:8000::/33' })
    expect(normalizeAllowedAddress('::ffff:198.51.100.9')).toEqual({ address: '198.51.100.9' })
    expect(normalizeAllowedAddress('::ffff:198.51.100.0/120')).toEqual({ address: '198.51.100.0/24' })
  })

  it('refuses what is not an address or range, and ranges wide enough to let most of the internet through', () => {
    for (const entry of ['', 'example.com', '203.0.113', '203.0.113.7/', '203.0.113.7/33', '203.0.113.7/2x', '1.2.3.4/8/8', 'fe80::1%eth0', '2001:db8::/129']) {
      expect(normalizeAllowedAddress(entry), entry).toHaveProperty('problem')
    }
    expect(normalizeAllowedAddress('0.0.0.0/0')).toEqual({ problem: expect.stringContaining('wider than /8') })
    expect(normalizeAllowedAddress('10.0.0.0/7')).toEqual({ problem: expect.stringContaining('wider than /8') })
    expect(normalizeAllowedAddress('10.0.0.0/8')).toEqual({ address: '10.0.0.0/8' })
    expect(normalizeAllowedAddress('2001::/23')).toEqual({ problem: expect.stringContaining('wider than /24') })
  })

  it('names each refused entry by its index, deduplicates, and bounds the list', () => {
    expect(normalizeAllowedAddresses(['203.0.113.9/24', 'nope', '203.0.113.0/24'])).toEqual({
      addresses: ['203.0.113.0/24'],
      issues: [{ field: 'settings.allowedAddresses.1', message: expect.stringContaining('"nope"') }],
    })
    const tooMany = Array.from({ length: MAX_ALLOWED_ADDRESSES + 1 }, (_, index) => `10.${index >> 8}.${index & 255}.1`)
    expect(normalizeAllowedAddresses(tooMany).issues).toEqual([{ field: 'settings.allowedAddresses', message: `must list at most ${MAX_ALLOWED_ADDRESSES} distinct addresses or ranges` }])
    // The bound counts distinct entries: one repeat more than it is not refused.
    const withRepeat = [...tooMany.slice(0, MAX_ALLOWED_ADDRESSES), '10.0.0.1/32']
    expect(normalizeAllowedAddresses(withRepeat)).toEqual({ addresses: tooMany.slice(0, MAX_ALLOWED_ADDRESSES), issues: [] })
  })

  it('refuses IPv6 ranges around the IPv4-mapped range, and never lets an IPv4 client in by an IPv6 entry', () => {
    // On main, node's BlockList read ::/24 as holding every IPv4 client (it compares IPv4 in its mapped form).
    for (const entry of ['::/24', '::/80', '0:0:0:0:0:fffe::/95', '::ffff:0:0/90']) {
      expect(normalizeAllowedAddress(entry), entry).toEqual({ problem: expect.stringContaining('IPv4 clients are matched against IPv4 entries only') })
    }
    expect(normalizeAllowedAddress('::/97')).toEqual({ address: '::/97' })
    expect(normalizeAllowedAddress('::ffff:0:0/96')).toEqual({ problem: expect.stringContaining('wider than /8') })
    // A list stored before the refusal (or an IPv6 entry beside the mapped range) matches no IPv4 client.
    expect(isAddressAllowed(['::/24'], '198.51.100.1')).toBe(false)
    expect(isAddressAllowed(['::/24'], '::ffff:198.51.100.1')).toBe(false)
    expect(isAddressAllowed(['::/24'], '::1')).toBe(true)
  })

  it('matches a client address against the addresses and ranges of the list', () => {
    const list = ['203.0.113.0/24', '198.51.100.7', '2001:db8::/48']
    expect(isAddressAllowed(list, '203.0.113.200')).toBe(true)
    expect(isAddressAllowed(list, '203.0.114.1')).toBe(false)
    expect(isAddressAllowed(list, '198.51.100.7')).toBe(true)
    expect(isAddressAllowed(list, '198.51.100.8')).toBe(false)
    expect(isAddressAllowed(list, '2001:db8:0:ffff::1')).toBe(true)
    expect(isAddressAllowed(list, '2001:db8:1::1')).toBe(false)
    // A dual-stack socket's form of an IPv4 peer is that peer.
    expect(isAddressAllowed(list, '::ffff:203.0.113.5')).toBe(true)
    expect(isAddressAllowed(list, 'unknown')).toBe(false)
    expect(isAddressAllowed([], '203.0.113.200')).toBe(false)
  })
})
