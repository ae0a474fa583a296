import { describe, expect, it } from 'vitest'
import {
  accessLabel,
  allowedAddressesOf,
  allowedAddressesText,
  changedAddressesOf,
  changedTermsOf,
  expiresAtOf,
  expiryChoices,
  keyAddressesLabel,
  keySitesLabel,
  siteIdsOf,
} from '../../dashboard/src/lib/api-keys.js'

const now = new Date('2026-11-29T03:28:34.000Z')

describe("the API keys page's allowed addresses", () => {
  it('read the text one entry per line (or separated by spaces or commas), and none as any address', () => {
    expect(allowedAddressesOf(' 203.0.113.0/24\n\n2001:db8::/48, 198.51.100.7 ')).toEqual(['203.0.113.0/24', '2001:db8::/48', '198.51.100.7'])
    expect(allowedAddressesOf(' \n ')).toBeNull()
    expect(allowedAddressesText(['203.0.113.0/24', '198.51.100.7'])).toBe('203.0.113.0/24\n198.51.100.7')
    expect(allowedAddressesText(null)).toBe('')
  })

  it('send an edit the list only when the text no longer shows the key\'s', () => {
    const key = { allowedAddresses: ['203.0.113.0/24', '198.51.100.7'] }
    expect(changedAddressesOf(key, '203.0.113.0/24\n198.51.100.7\n')).toEqual({})
    expect(changedAddressesOf(key, '203.0.113.0/24')).toEqual({ allowedAddresses: ['203.0.113.0/24'] })
    expect(changedAddressesOf(key, '')).toEqual({ allowedAddresses: null })
    expect(changedAddressesOf({ allowedAddresses: null }, '  ')).toEqual({})
    expect(changedAddressesOf({ allowedAddresses: null }, '198.51.100.7')).toEqual({ allowedAddresses: ['198.51.100.7'] })
  })

  it('list a key\'s addresses as Any, up to three by name, or two and a count', () => {
    expect(keyAddressesLabel(null)).toBe('Any')
    expect(keyAddressesLabel(['203.0.113.0/24', '2001:db8::/48', '198.51.100.7'])).toBe('203.0.113.0/24, 2001:db8::/48, 198.51.100.7')
    expect(keyAddressesLabel(['203.0.113.0/24', '2001:db8::/48', '198.51.100.7', '198.51.100.8'])).toBe('203.0.113.0/24, 2001:db8::/48 and 2 more')
  })
})

describe("the API keys page's terms of a new key", () => {
  it('count an expiry in days from the moment of the submission, and never as null', () => {
    expect(expiresAtOf('7d', now)).toBe('2026-12-06T03:28:34.000Z')
    expect(expiresAtOf('30d', now)).toBe('2026-12-29T03:28:34.000Z')
    expect(expiresAtOf('90d', now)).toBe('2027-02-27T03:28:34.000Z')
    expect(expiresAtOf('1y', now)).toBe('2027-11-29T03:28:34.000Z')
    expect(expiresAtOf('never', now)).toBeNull()
    expect(expiryChoices.map((choice) => choice.label)).toEqual(['In 7 days', 'In 30 days', 'In 90 days', 'In 1 year', 'Never'])
  })

  it('name each access as the list shows it', () => {
    expect(accessLabel('full')).toBe('Full access')
    expect(accessLabel('read')).toBe('Read only')
  })

  it("send no siteIds for all sites (the default), else the chosen ones in the account's order", () => {
    const sites = [{ id: 'a' }, { id: 'b' }, { id: 'c' }]
    expect(siteIdsOf('all', new Set(['b']), sites)).toBeNull()
    expect(siteIdsOf('some', new Set(['c', 'a']), sites)).toEqual(['a', 'c'])
    // One no longer listed (deleted meanwhile) is not sent.
    expect(siteIdsOf('some', new Set(['gone']), sites)).toEqual([])
  })

  it('send an edit only the access and sites the operator changed, so a rename keeps sites no longer loaded', () => {
    const loaded = [{ id: 'a' }, { id: 'b' }]
    const key = { access: 'read' as const, siteIds: ['a', 'gone'] }
    const unchanged = { access: 'read' as const, scope: 'some' as const, chosen: new Set(['gone', 'a']) }
    // A rename: nothing of the terms, whether the sites have loaded, are still loading, or are all gone.
    expect(changedTermsOf(key, unchanged, loaded)).toEqual({})
    expect(changedTermsOf(key, unchanged, [])).toEqual({})
    expect(changedTermsOf({ access: 'full', siteIds: null }, { access: 'full', scope: 'all', chosen: new Set() }, [])).toEqual({})
    // What changed is sent, the list as the form shows it.
    expect(changedTermsOf(key, { ...unchanged, access: 'full' }, loaded)).toEqual({ access: 'full' })
    expect(changedTermsOf(key, { ...unchanged, chosen: new Set(['gone', 'a', 'b']) }, loaded)).toEqual({ siteIds: ['a', 'b'] })
    expect(changedTermsOf(key, { ...unchanged, chosen: new Set(['a']) }, loaded)).toEqual({ siteIds: ['a'] })
    expect(changedTermsOf(key, { ...unchanged, scope: 'all' }, loaded)).toEqual({ siteIds: null })
    expect(changedTermsOf({ access: 'read', siteIds: null }, { ...unchanged, scope: 'some', chosen: new Set(['b']) }, loaded)).toEqual({ siteIds: ['b'] })
  })

  it("name a listed key's sites, and count those the account no longer reaches", () => {
    const sites = [{ id: 'a', name: 'Shop' }, { id: 'b', name: 'Blog' }]
    expect(keySitesLabel(null, sites)).toBe('All sites')
    expect(keySitesLabel(['b', 'a'], sites)).toBe('Blog, Shop')
    expect(keySitesLabel(['a', 'x'], sites)).toBe('Shop, 1 site no longer yours')
    expect(keySitesLabel(['x', 'y'], sites)).toBe('2 sites no longer yours')
  })
})
