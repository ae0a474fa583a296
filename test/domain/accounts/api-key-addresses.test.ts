import { describe, expect, it } from 'vitest'
import { widensApiKey, type ApiKeyTerms } from '../../../src/domain/accounts/api-key-access.js'
import { isApiKeyUsableFrom, normalizeApiKeyAddresses, widensAddressList } from '../../../src/domain/accounts/api-key-addresses.js'

describe('an API key address list', () => {
  it('is normalized and deduplicated, its problems named by index', () => {
    expect(normalizeApiKeyAddresses(['203.0.113.7/24', '2001:DB8::1', '203.0.113.0/24', '::ffff:198.51.100.7'])).toEqual({
      addresses: ['203.0.113.0/24', '2001:db8::1', '198.51.100.7'],
      issues: [],
    })
    const { issues } = normalizeApiKeyAddresses(['example.com', '0.0.0.0/0', '2001:db8::/15', '2001:db8::/16'])
    expect(issues.map((issue) => issue.field)).toEqual(['allowedAddresses.0', 'allowedAddresses.1', 'allowedAddresses.2'])
  })

  it('lets a key without a list be used from anywhere, one with a list from its entries only', () => {
    expect(isApiKeyUsableFrom(null, '198.51.100.7')).toBe(true)
    const list = ['203.0.113.0/24', '2001:db8::/48']
    expect(isApiKeyUsableFrom(list, '203.0.113.255')).toBe(true)
    expect(isApiKeyUsableFrom(list, '::ffff:203.0.113.1')).toBe(true)
    expect(isApiKeyUsableFrom(list, '2001:db8:0:ffff::1')).toBe(true)
    expect(isApiKeyUsableFrom(list, '203.0.112.255')).toBe(false)
    expect(isApiKeyUsableFrom(list, '2001:db8:1::1')).toBe(false)
    expect(isApiKeyUsableFrom(list, 'not an address')).toBe(false)
  })

  it('is widened by any address or range that no entry of it holds, or by no list at all', () => {
    const current = ['203.0.113.0/24', '2001:db8::/48', '198.51.100.7']
    expect(widensAddressList(null, ['203.0.113.0/24'])).toBe(false)
    expect(widensAddressList(null, null)).toBe(false)
    expect(widensAddressList(current, null)).toBe(true)
    // Within an entry: the entry itself, a narrower range, an address; in another order.
    expect(widensAddressList(current, ['198.51.100.7', '203.0.113.128/25', '2001:db8:0:1::/64', '203.0.113.4'])).toBe(false)
    expect(widensAddressList(current, ['203.0.112.0/23'])).toBe(true)
    expect(widensAddressList(current, ['198.51.100.8'])).toBe(true)
    expect(widensAddressList(current, ['2001:db8::/47'])).toBe(true)
    // An IPv4 entry does not hold an IPv6 range of the same bits, nor the other way round.
    expect(widensAddressList(['0.0.0.0/8'], ['::/104'])).toBe(true)
  })

  it('makes an edit a widening, which the session confirms with the password', () => {
    const terms: ApiKeyTerms = { access: 'read', siteIds: null, allowedAddresses: ['203.0.113.0/24'], expiresAt: null }
    expect(widensApiKey(terms, { ...terms, allowedAddresses: ['203.0.113.9'] })).toBe(false)
    expect(widensApiKey(terms, { ...terms, allowedAddresses: null })).toBe(true)
    expect(widensApiKey({ ...terms, allowedAddresses: null }, terms)).toBe(false)
  })
})
