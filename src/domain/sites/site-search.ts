/** What a site list is searched and sorted by: the API's `GET /sites?q=&sort=` and the dashboard's filter box alike. */
export interface SearchedSite {
  name: string
  siteKey: string
  domains: readonly string[]
}

export const SITE_SORTS = ['created', 'name'] as const
export type SiteSort = (typeof SITE_SORTS)[number]

/** Longest search text: longer than any name (200) or domain (253) needs. */
export const MAX_SITE_SEARCH_LENGTH = 256

/**
 * Text as searches compare it: in Unicode NFKC, then lower case. A letter composed or decomposed
 * ("ü" or "u" and a combining diaeresis), a compatibility form (full-width "ＳＨＯＰ", the ligature
 * "ﬁ") and any case are each one text. Lower case as every locale has it (not the browser's
 * locale's), so that the dashboard's filter and the API find the same sites.
 */
export function foldForSearch(text: string): string {
  return text.normalize('NFKC').toLowerCase()
}

/**
 * Whether the site's name, one of its domains or its site key holds `query` (trimmed), both folded
 * (foldForSearch): "client 07", "shop.example" and "tgk_3f" all find their site, and "CAFÉ" finds
 * "Café" however either é was typed. An empty query finds all. Domains are compared as given (stored
 * in punycode); createSiteSearch finds them by their Unicode spelling too.
 */
export function matchesSiteSearch(site: SearchedSite, query: string): boolean {
  const wanted = foldForSearch(query.trim())
  if (wanted === '') return true
  return [site.name, site.siteKey, ...site.domains].some((text) => foldForSearch(text).includes(wanted))
}

/**
 * A domain's other spellings, as the platform can tell them: the API's from node:url
 * (hostname-search.ts), the dashboard's from the browser (dashboard/src/lib/domain-spellings.ts).
 * Each answers '' when the text has no such spelling.
 */
export interface DomainSpellings {
  /** The punycode of text typed as a domain, or part of one (bücher: xn--bcher-kva). */
  toASCII(text: string): string
  /** The Unicode of a stored domain (xn--bcher-kva.example: bücher.example). */
  toUnicode(domain: string): string
}

/** Characters a host cannot hold: a URL parser reads a path, query, port or credentials there instead. */
const NOT_IN_A_HOST = /[\s/\\?#@:%[\]]/

/**
 * Whether a query may have another spelling as a domain: ASCII is its own punycode (and a URL
 * parser would read a number as an IPv4 address: 07 as 0.0.0.7), and text with a URL's delimiters
 * would be cut at them (bücher/x read as bücher).
 */
function mayBeSpelledOtherwise(text: string): boolean {
  return /[^\p{ASCII}]/u.test(text) && !NOT_IN_A_HOST.test(text)
}

/**
 * A site search that finds an internationalized domain in either spelling: domains are stored in
 * punycode (normalizeHostname), as browsers send them in Origin, while people type them in
 * Unicode. "bücher", "büch" and "xn--bcher-kva" all find the site of xn--bcher-kva.example. The
 * query's punycode spelling is tried as well, for what only the URL standard maps (an ideographic
 * full stop between labels). The API (`GET /sites?q=`) and the dashboard's filter box find the
 * same sites.
 */
export function createSiteSearch(query: string, spellings: DomainSpellings): (site: SearchedSite) => boolean {
  const folded = foldForSearch(query.trim())
  if (folded === '') return () => true
  const ascii = mayBeSpelledOtherwise(folded) ? spellings.toASCII(folded) : ''
  const queries = ascii === '' || ascii === folded ? [query] : [query, ascii]
  const withUnicodeSpelling = (domain: string): string[] => {
    const unicode = spellings.toUnicode(domain)
    return unicode === '' || unicode === domain ? [domain] : [domain, unicode]
  }
  return (site) => {
    const spelled = { ...site, domains: site.domains.flatMap(withUnicodeSpelling) }
    return queries.some((wanted) => matchesSiteSearch(spelled, wanted))
  }
}

const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true })

/**
 * The sites in `sort` order, from a list oldest first: 'created' keeps it; 'name' sorts by name as
 * a person reads it (case aside, "Client 2" before "Client 10"), the older first of equal names.
 */
export function sortSites<Site extends SearchedSite>(sites: readonly Site[], sort: SiteSort): Site[] {
  return sort === 'name' ? [...sites].sort((first, second) => byName.compare(first.name, second.name)) : [...sites]
}
