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
 * "Café" however either é was typed. An empty query finds all. Domains are compared as given (stored in punycode); the API
 * gives their Unicode spelling too (hostname-search.ts).
 */
export function matchesSiteSearch(site: SearchedSite, query: string): boolean {
  const wanted = foldForSearch(query.trim())
  if (wanted === '') return true
  return [site.name, site.siteKey, ...site.domains].some((text) => foldForSearch(text).includes(wanted))
}

const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true })

/**
 * The sites in `sort` order, from a list oldest first: 'created' keeps it; 'name' sorts by name as
 * a person reads it (case aside, "Client 2" before "Client 10"), the older first of equal names.
 */
export function sortSites<Site extends SearchedSite>(sites: readonly Site[], sort: SiteSort): Site[] {
  return sort === 'name' ? [...sites].sort((first, second) => byName.compare(first.name, second.name)) : [...sites]
}
