import { RecentCache } from '../recent-cache.js'

/**
 * Browsers treat https URLs and loopback hosts as potentially trustworthy; only there do they send
 * client hints (Sec-CH-UA) and expose navigator.userAgentData. The automation checks need to know
 * both for the request (was it sent to such a URL?) and for the page that ran the SDK (is it a
 * secure context?), so that a missing hint is only held against a browser that had to send it.
 */
export function isPotentiallyTrustworthy(protocol: string, hostname: string): boolean {
  if (protocol === 'https' || protocol === 'https:') return true
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  return host === 'localhost' || host.endsWith('.localhost') || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === '::1'
}

/**
 * The answers for recent Origin and Referer texts of ordinary length: a site's visitors send a
 * handful of them, and parsing a URL costs more than the lookup. A header may hold 16 KB; longer
 * texts are parsed each time rather than kept.
 */
const securePages = new RecentCache<string, boolean>(1_000)
const MAX_REMEMBERED_PAGE_LENGTH = 512

/** Whether the page named by an Origin (or Referer) header is a secure context; false when absent or unreadable. */
export function isSecurePageOrigin(origin: string | undefined): boolean {
  if (origin === undefined || origin === '' || origin === 'null') return false
  return origin.length > MAX_REMEMBERED_PAGE_LENGTH ? readSecurePage(origin) : securePages.getOrCompute(origin, readSecurePage)
}

function readSecurePage(origin: string): boolean {
  try {
    const url = new URL(origin)
    return isPotentiallyTrustworthy(url.protocol, url.hostname)
  } catch {
    return false
  }
}
