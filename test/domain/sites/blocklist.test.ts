import { describe, expect, it } from 'vitest'
import { COUNTRY_CODES } from '../../../src/domain/network/country-codes.js'
import { defaultSiteSettings } from '../../../src/domain/sites/site.js'
import { normalizeSiteInput } from '../../../src/domain/sites/site-input.js'
import {
  findBlocklistLabels, hasBlocklist, isBlocklisted, MAX_BLOCKED_ADDRESSES, MAX_BLOCKED_COUNTRIES, normalizeBlockedAddresses, normalizeBlockedCountries,
} from '../../../src/domain/sites/blocklist.js'

const rules = { isHttpsRequired: false, allowPrivateWebhooks: true }

describe("a site's address blocklist", () => {
  it("stores entries in the allowlist's canonical form, deduplicated", () => {
    expect(normalizeBlockedAddresses([' 203.0.113.7 ', '203.0.113.7/24', '2001:DB8:0:0::1', '::ffff:198.51.100.0/120', '203.0.113.99/24'])).toEqual({
      addresses: ['203.0.113.7', '203.0.113.0/24', '2001:db8::1', '198.51.100.0/24'],
      issues: [],
    })
  })

  it('takes the ranges one network holds, wider than the allowlist takes, and refuses wider ones', () => {
    // A hosting provider's /10 of IPv4, a carrier's /19 of IPv6 (the allowlist stops at /24).
    expect(normalizeBlockedAddresses(['100.64.0.0/10', '3.0.0.0/8', '2003::/19', '2001::/16'])).toEqual({
      addresses: ['100.64.0.0/10', '3.0.0.0/8', '2003::/19', '2001::/16'],
      issues: [],
    })
    const refused = normalizeBlockedAddresses(['0.0.0.0/0', '2000::/3', 'office', '203.0.113.7/33'])
    expect(refused.addresses).toEqual([])
    expect(refused.issues).toEqual([
      { field: 'settings.blockedAddresses.0', message: expect.stringContaining('wider than /8, which would turn away a large part of the internet') },
      { field: 'settings.blockedAddresses.1', message: expect.stringContaining('wider than /16') },
      { field: 'settings.blockedAddresses.2', message: expect.stringContaining('must be an IPv4 or IPv6 address or a range') },
      { field: 'settings.blockedAddresses.3', message: expect.stringContaining('prefix length that is not 0 to 32') },
    ])
  })

  it('bounds the list as the allowlist is bounded, counting distinct entries', () => {
    const tooMany = Array.from({ length: MAX_BLOCKED_ADDRESSES + 1 }, (_, index) => `10.${index >> 8}.${index & 255}.1`)
    expect(normalizeBlockedAddresses(tooMany).issues).toEqual([{ field: 'settings.blockedAddresses', message: `must list at most ${MAX_BLOCKED_ADDRESSES} distinct addresses or ranges` }])
    expect(normalizeBlockedAddresses([...tooMany.slice(0, MAX_BLOCKED_ADDRESSES), tooMany[0] ?? '']).issues).toEqual([])
  })

  it("refuses IPv6 ranges around the IPv4-mapped range, which would block no IPv4 client", () => {
    expect(normalizeBlockedAddresses(['::/16', '::ffff:203.0.113.0/120']).issues).toEqual([
      { field: 'settings.blockedAddresses.0', message: expect.stringContaining('contains the IPv4-mapped range ::ffff:0:0/96') },
    ])
  })
})

describe("a site's country blocklist", () => {
  it('stores codes uppercase, each once, sorted', () => {
    expect(normalizeBlockedCountries(['us', ' DE ', 'De', 'xk'])).toEqual({ countries: ['DE', 'US', 'XK'], issues: [] })
  })

  it('takes the codes the IP data answers and nothing else, XX (no known country) included', () => {
    expect(COUNTRY_CODES.size).toBe(250)
    expect(normalizeBlockedCountries([...COUNTRY_CODES])).toEqual({ countries: [...COUNTRY_CODES].sort(), issues: [] })
    const refused = normalizeBlockedCountries(['XX', 'ZZ', 'DEU', 'Germany', '', 'UK'])
    expect(refused.countries).toEqual([])
    expect(refused.issues).toEqual([
      { field: 'settings.blockedCountries.0', message: expect.stringContaining('cannot be XX') },
      ...[1, 2, 3, 4, 5].map((index) => ({ field: `settings.blockedCountries.${index}`, message: expect.stringContaining('two-letter ISO 3166-1 country code') })),
    ])
    // Each code once: the list holds no more than every code, however many repeats it was sent with.
    expect(normalizeBlockedCountries([...COUNTRY_CODES, 'DE', 'de'])).toEqual({ countries: [...COUNTRY_CODES].sort(), issues: [] })
    expect(MAX_BLOCKED_COUNTRIES).toBe(COUNTRY_CODES.size)
  })

  it('takes two ASCII letters only, before upper-casing them', () => {
    // 'ß'.toUpperCase() is 'SS', South Sudan's code; the dotless ı upper-cases to I.
    const refused = normalizeBlockedCountries(['ß', 'ıt', 'ａｔ', 'd e'])
    expect(refused.countries).toEqual([])
    expect(refused.issues.map((issue) => issue.field)).toEqual([0, 1, 2, 3].map((index) => `settings.blockedCountries.${index}`))
    expect(normalizeBlockedCountries([' ss '])).toEqual({ countries: ['SS'], issues: [] })
  })

  it('is normalized with the rest of a site update, its issues named by field', () => {
    const { value, issues } = normalizeSiteInput({ settings: { blockedAddresses: ['203.0.113.7/24'], blockedCountries: ['nl', 'XX'] } }, rules)
    expect(value.settings).toMatchObject({ blockedAddresses: ['203.0.113.0/24'], blockedCountries: ['NL'] })
    expect(issues.map((issue) => issue.field)).toEqual(['settings.blockedCountries.1'])
  })
})

describe('matching a client against the blocklist', () => {
  const settings = { blockedAddresses: ['203.0.113.0/24', '2001:db8::/32'], blockedCountries: ['NL', 'RU'] }

  it('names what turns the client away: its address, its country, or both', () => {
    expect(findBlocklistLabels(settings, '203.0.113.200', 'DE')).toEqual(['address_blocked'])
    expect(findBlocklistLabels(settings, '::ffff:203.0.113.5', 'DE')).toEqual(['address_blocked'])
    expect(findBlocklistLabels(settings, '2001:db8:ffff::1', 'US')).toEqual(['address_blocked'])
    expect(findBlocklistLabels(settings, '198.51.100.1', 'NL')).toEqual(['country_blocked'])
    expect(findBlocklistLabels(settings, '203.0.113.1', 'RU')).toEqual(['address_blocked', 'country_blocked'])
    expect(findBlocklistLabels(settings, '198.51.100.1', 'DE')).toEqual([])
    expect(findBlocklistLabels(settings, '198.51.100.1', 'XX')).toEqual([])
  })

  it('looks the country up only when the address is not listed and the site blocks countries', async () => {
    const looked: string[] = []
    const countryOf = async (ip: string) => {
      looked.push(ip)
      return 'NL'
    }
    expect(await isBlocklisted(settings, '203.0.113.9', countryOf)).toBe(true)
    expect(await isBlocklisted({ ...settings, blockedCountries: [] }, '198.51.100.1', countryOf)).toBe(false)
    expect(looked).toEqual([])
    expect(await isBlocklisted(settings, '198.51.100.1', countryOf)).toBe(true)
    expect(looked).toEqual(['198.51.100.1'])
  })

  it('is off, at one check, for the sites without one', () => {
    expect(hasBlocklist(defaultSiteSettings)).toBe(false)
    expect(hasBlocklist({ blockedAddresses: [], blockedCountries: ['NL'] })).toBe(true)
    expect(hasBlocklist({ blockedAddresses: ['203.0.113.7'], blockedCountries: [] })).toBe(true)
    expect(findBlocklistLabels(defaultSiteSettings, '203.0.113.7', 'NL')).toEqual([])
  })
})
