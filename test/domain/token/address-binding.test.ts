import { describe, expect, it } from 'vitest'
import { addressClaimOf, matchesAddressClaim, refusesAddress } from '../../../src/domain/token/address-binding.js'

const claim = (ip: string) => addressClaimOf(ip, (group) => `<${group}>`)

describe('address claims', () => {
  it('name the family and the address group: an IPv4 address, an IPv6 /64', () => {
    expect(claim('203.0.113.7')).toBe('4<203.0.113.7>')
    expect(claim('::ffff:203.0.113.7')).toBe('4<203.0.113.7>')
    expect(claim('2001:db8:1:2::1')).toBe('6<20010db800010002::/64>')
    expect(claim('2001:DB8:1:2:ffff::9')).toBe('6<20010db800010002::/64>')
    expect(claim('unknown')).toBeUndefined()
    expect(claim('')).toBeUndefined()
  })

  it('match within the group, not across it, and say nothing across families or without a side', () => {
    expect(matchesAddressClaim(claim('203.0.113.7') ?? null, claim('203.0.113.7'))).toBe(true)
    expect(matchesAddressClaim(claim('203.0.113.7') ?? null, claim('203.0.113.8'))).toBe(false)
    expect(matchesAddressClaim(claim('2001:db8:1:2::1') ?? null, claim('2001:db8:1:2::2'))).toBe(true)
    expect(matchesAddressClaim(claim('2001:db8:1:2::1') ?? null, claim('2001:db8:1:3::1'))).toBe(false)
    expect(matchesAddressClaim(claim('203.0.113.7') ?? null, claim('2001:db8::1'))).toBeNull()
    expect(matchesAddressClaim(null, claim('203.0.113.7'))).toBeNull()
    expect(matchesAddressClaim(claim('203.0.113.7') ?? null, undefined)).toBeNull()
  })

  it('are refused only by a site that refuses, and only on a mismatch', () => {
    expect(refusesAddress('refuse', false)).toBe(true)
    for (const match of [true, null]) expect(refusesAddress('refuse', match)).toBe(false)
    for (const check of ['off', 'report'] as const) expect(refusesAddress(check, false)).toBe(false)
  })
})
