import { domainToASCII, domainToUnicode } from 'node:url'
import { createSiteSearch, type SearchedSite } from './site-search.js'

/**
 * The API's site search (`GET /sites?q=`): createSiteSearch with node:url's spellings of domains.
 * Not in site-search.ts: the dashboard shares that file, and node:url is not the browser's.
 */
export function createHostnameSearch(query: string): (site: SearchedSite) => boolean {
  return createSiteSearch(query, { toASCII: domainToASCII, toUnicode: domainToUnicode })
}
