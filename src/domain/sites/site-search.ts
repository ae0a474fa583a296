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
 * Whether the site's name, one of its domains or its site key holds `query` (trimmed), whatever
 * the case: "client 07", "shop.example" and "tgk_3f" all find their site. An empty query finds all.
 */
export function matchesSiteSearch(site: SearchedSite, query: string): boolean {
  const wanted = query.trim().toLocaleLowerCase()
  if (wanted === '') return true
  return [site.name, site.siteKey, ...site.domains].some((text) => text.toLocaleLowerCase().includes(wanted))
}

const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true })

/**
 * The sites in `sort` order, from a list oldest first: 'created' keeps it; 'name' sorts by name as
 * a person reads it (case aside, "Client 2" before "Client 10"), the older first of equal names.
 */
export function sortSites<Site extends SearchedSite>(sites: readonly Site[], sort: SiteSort): Site[] {
  return sort === 'name' ? [...sites].sort((first, second) => byName.compare(first.name, second.name)) : [...sites]
}
