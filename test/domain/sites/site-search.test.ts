import { describe, expect, it } from 'vitest'
import { createHostnameSearch } from '../../../src/domain/sites/hostname-search.js'
import { createSiteSearch, foldForSearch, matchesSiteSearch, type SearchedSite } from '../../../src/domain/sites/site-search.js'
import { browserDomainSpellings } from '../../../dashboard/src/lib/domain-spellings.js'

const site = (name: string, domains: string[] = []): SearchedSite => ({ name, siteKey: 'tgk_3f9a1c', domains })

describe('text as site searches compare it', () => {
  it('is one text whatever the case and however its letters were composed', () => {
    expect(foldForSearch('CAF\u00C9')).toBe(foldForSearch('cafe\u0301'))
    expect(foldForSearch('M\u00FCller')).toBe('m\u00FCller')
    expect(foldForSearch('\u00C5ngstr\u00F6m')).toBe(foldForSearch('A\u030Angstro\u0308m'))
  })

  it('takes compatibility forms as the letters they stand for', () => {
    expect(foldForSearch('\uFF33\uFF28\uFF2F\uFF30')).toBe('shop')
    expect(foldForSearch('\uFB01le')).toBe('file')
    expect(foldForSearch('\u2460')).toBe('1')
  })

  it('keeps letters that only look alike apart', () => {
    expect(foldForSearch('mueller')).not.toBe(foldForSearch('m\u00FCller'))
    expect(foldForSearch('\u0410')).not.toBe(foldForSearch('A'))
  })
})

describe("the dashboard's site filter", () => {
  it('finds a name typed in another Unicode form or case', () => {
    expect(matchesSiteSearch(site('Caf\u00E9 M\u00FCller'), 'cafe\u0301 mu\u0308')).toBe(true)
    expect(matchesSiteSearch(site('Cafe\u0301 Mu\u0308ller'), 'CAF\u00C9')).toBe(true)
    expect(matchesSiteSearch(site('\uFF33\uFF28\uFF2F\uFF30 2'), 'shop 2')).toBe(true)
    expect(matchesSiteSearch(site('Caf\u00E9'), 'cafe')).toBe(false)
  })

  it('still finds by domain and site key, and all sites for blanks', () => {
    expect(matchesSiteSearch(site('A', ['shop02.client.example']), ' SHOP02.client ')).toBe(true)
    expect(matchesSiteSearch(site('A'), 'TGK_3F')).toBe(true)
    expect(matchesSiteSearch(site('A'), '   ')).toBe(true)
    expect(matchesSiteSearch(site('A'), 'b')).toBe(false)
  })
})

describe("the dashboard's site filter with the browser's spellings of domains", () => {
  const filter = (query: string) => createSiteSearch(query, browserDomainSpellings)
  const bookshop = site('Books', ['xn--bcher-kva.example'])

  it('finds an internationalized domain by its Unicode spelling, whole or in part, or its punycode', () => {
    for (const query of ['b\u00FCcher', 'b\u00FCch', 'BU\u0308CHER.example', 'xn--bcher-kva', 'b\u00FCcher\u3002example']) {
      expect(filter(query)(bookshop), query).toBe(true)
    }
    expect(filter('bucher')(bookshop)).toBe(false)
  })

  it('finds the same sites as the API for every query', () => {
    const sites = [
      bookshop,
      site('M\u00FCnchen', ['xn--mnchen-3ya.example', 'shop.example']),
      site('Client 07', ['shop.client07.example']),
      site('Caf\u00E9', ['xn--caf-dma.example']),
    ]
    const queries = ['b\u00FCcher', 'b\u00FCch', 'm\u00FCnchen', 'M\u00DCN', 'mnchen', 'caf\u00E9', 'cafe\u0301.EXAMPLE', 'xn--', '07', 'client 07', 'shop.client07',
      'tgk_3f', 'b\u00FCcher/x', '\u00FC:80', '\u00FC@shop', '\uFF33\uFF28\uFF2F\uFF30', '\u0410', '', ' ', 'nothing']
    for (const query of queries) {
      expect(sites.map(filter(query)), query).toEqual(sites.map(createHostnameSearch(query)))
    }
  })
})

describe("the API's site search", () => {
  const bookshop = site('Books', ['xn--bcher-kva.example'])

  it('finds an internationalized domain by its Unicode or its punycode spelling', () => {
    for (const query of ['b\u00FCcher', 'BU\u0308CHER.example', 'xn--bcher-kva', 'b\u00FCcher\u3002example']) {
      expect(createHostnameSearch(query)(bookshop), query).toBe(true)
    }
    expect(createHostnameSearch('bucher')(bookshop)).toBe(false)
    // Not cut at a URL's delimiters, as a URL parser would cut the query (bücher/x read as bücher).
    for (const query of ['b\u00FCcher/x', 'b\u00FCcher?x', 'b\u00FCcher#x']) expect(createHostnameSearch(query)(bookshop), query).toBe(false)
  })

  it('finds a site whose domain was given in Unicode by its punycode, and names and keys as the filter does', () => {
    expect(createHostnameSearch('xn--mnchen-3ya')(site('M', ['xn--mnchen-3ya.example']))).toBe(true)
    expect(createHostnameSearch('cafe\u0301')(site('Caf\u00E9'))).toBe(true)
    expect(createHostnameSearch('client 07')(site('Client 07'))).toBe(true)
    expect(createHostnameSearch('tgk_3f')(site('A'))).toBe(true)
    expect(createHostnameSearch('')(site('A'))).toBe(true)
    expect(createHostnameSearch('nothing')(bookshop)).toBe(false)
  })
})
