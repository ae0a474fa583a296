import { describe, expect, it } from 'vitest'
import { addressGroupOf, fingerprintDigest } from '../../../src/domain/history/client-keys.js'

describe('addressGroupOf', () => {
  it('keeps IPv4 addresses and groups IPv6 addresses by /64', () => {
    expect(addressGroupOf('203.0.113.7')).toBe('203.0.113.7')
    expect(addressGroupOf('::ffff:203.0.113.7')).toBe('203.0.113.7')
    expect(addressGroupOf('2001:db8:1:2:aaaa::1')).toBe('20010db800010002::/64')
    expect(addressGroupOf('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(addressGroupOf('2001:db8:1:2::9'))
    expect(addressGroupOf('2001:db8:1:3::1')).not.toBe(addressGroupOf('2001:db8:1:2::1'))
  })
})

describe('fingerprintDigest', () => {
  const device = { canvas: 'c'.repeat(2) + '1f', webgl: 'w1', platform: 'Win32', hardwareConcurrency: 8, screenWidth: 1920, screenHeight: 1080, timezone: 'Europe/Paris' }

  it('ignores values that change between page loads', () => {
    expect(fingerprintDigest({ ...device, outerWidth: 800 })).toBe(fingerprintDigest({ ...device, outerWidth: 1200 }))
  })

  it('tells devices apart', () => {
    expect(fingerprintDigest({ ...device, canvas: 'other' })).not.toBe(fingerprintDigest(device))
    expect(fingerprintDigest({ ...device, timezone: 'Asia/Tokyo' })).not.toBe(fingerprintDigest(device))
  })

  it('has no digest without a canvas', () => {
    expect(fingerprintDigest({ webgl: 'w1' })).toBeUndefined()
    expect(fingerprintDigest({ ...device, canvas: '' })).toBeUndefined()
  })
})
