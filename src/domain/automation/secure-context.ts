import { rememberPerHeaderValue } from '../recent-cache.js'

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

/** Remembered for the pages of recent requests: a site's visitors send a handful, and parsing a URL costs more than the lookup. */
const isSecurePage = rememberPerHeaderValue((origin: string): boolean => {
  try {
    const url = new URL(origin)
    return isPotentiallyTrustworthy(url.protocol, url.hostname)
  } catch {
    return false
  }
}, 1_000)

/** Whether the page named by an Origin (or Referer) header is a secure context; false when absent or unreadable. */
export function isSecurePageOrigin(origin: string | undefined): boolean {
  if (origin === undefined || origin === '' || origin === 'null') return false
  return isSecurePage(origin)
}
