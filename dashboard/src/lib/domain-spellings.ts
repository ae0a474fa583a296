// The npm package's ES module build (typed in ../punycode.d.ts), not Node's deprecated punycode module.
import { toUnicode } from 'punycode/punycode.es6.js'
import type { DomainSpellings } from '../../../src/domain/sites/site-search.js'

/**
 * The browser's spellings of a domain for the sites filter (createSiteSearch), the same as the
 * API's (node:url): the punycode of typed text as the browser parses a URL's host; the Unicode of
 * a stored domain by the punycode package, which browsers do not expose.
 */
export const browserDomainSpellings: DomainSpellings = {
  toASCII(text) {
    try {
      return new URL(`http://${text}/`).hostname
    } catch {
      return ''
    }
  },
  toUnicode(domain) {
    try {
      return toUnicode(domain)
    } catch {
      return ''
    }
  },
}
