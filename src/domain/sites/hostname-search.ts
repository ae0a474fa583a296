import { domainToASCII, domainToUnicode } from 'node:url'
import { foldForSearch, matchesSiteSearch, type SearchedSite } from './site-search.js'

/**
 * A site search of the API (`GET /sites?q=`), which finds an internationalized domain in either
 * spelling: domains are stored in punycode (normalizeHostname), as browsers send them in Origin,
 * while people type them in Unicode. "bücher" and "xn--bcher-kva" both find the site of
 * xn--bcher-kva.example. The query's punycode spelling is tried as well, for what only the URL
 * standard maps (an ideographic full stop between labels). Not in site-search.ts: the dashboard
 * shares that file, and node:url is not the browser's.
 */
export function createHostnameSearch(query: string): (site: SearchedSite) => boolean {
  const folded = foldForSearch(query.trim())
  if (folded === '') return () => true
  const ascii = domainToASCII(folded)
  const queries = ascii === '' || ascii === folded ? [query] : [query, ascii]
  return (site) => {
    const spelled = { ...site, domains: site.domains.flatMap((domain) => withUnicodeSpelling(domain)) }
    return queries.some((wanted) => matchesSiteSearch(spelled, wanted))
  }
}

/** The domain, and its Unicode spelling when it has another (xn--bcher-kva.example: bücher.example). */
function withUnicodeSpelling(domain: string): string[] {
  const unicode = domainToUnicode(domain)
  return unicode === '' || unicode === domain ? [domain] : [domain, unicode]
}
