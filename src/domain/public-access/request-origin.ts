/**
 * The page a public request comes from, by its Origin header or, only when there is none, its
 * Referer. `hostname` is null when the header that decides names no host (absent, `null` from
 * sandboxed frames and file: pages, unparseable, or longer than a DNS name can be). An app's page
 * at its own scheme names its host as a web page does: capacitor://localhost is `localhost`.
 */
export interface RequestOrigin {
  hostname: string | null
  /** Whether the request sent Origin or Referer at all. */
  hasOrigin: boolean
}

/** What browsers send in Origin almost always: scheme, lowercase ASCII host, optional port. */
const plainOrigin = /^https?:\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::\d{1,5})?$/

/** DNS names have at most 253 characters; a longer "host" names nothing (and would bloat tokens and log rows). */
const MAX_HOSTNAME_LENGTH = 253

function hostnameOf(value: string | undefined): string | null {
  if (value === undefined || value === '' || value === 'null') return null
  const hostname = parsedHostnameOf(value)
  return hostname !== null && hostname.length <= MAX_HOSTNAME_LENGTH ? hostname : null
}

function parsedHostnameOf(value: string): string | null {
  // The common case without a URL parse; anything else gets WHATWG URL's full normalisation.
  const plain = plainOrigin.exec(value)
  if (plain !== null) return plain[1] ?? null
  try {
    // URL keeps IPv6 brackets and a fully qualified name's trailing dot (a page opened at
    // https://example.com./); domains are listed without either, as the same host. URL lowercases
    // the host of http(s) only, so it is lowercased here for an app's own scheme too
    // (capacitor://LocalHost, set by the app's configuration): domains are listed in lower case.
    const hostname = new URL(value).hostname.replace(/^\[(.*)\]$/, '$1').replace(/(?<=[^.])\.$/, '').toLowerCase()
    return hostname === '' ? null : hostname
  } catch {
    return null
  }
}

/**
 * An Origin header, when sent, alone decides: `Origin: null` is the browser saying the page has no
 * origin to give (a sandboxed frame, a file: page), and a Referer beside it, which the client
 * chooses as freely, must not stand in for one (docs/core-flow.md, "Origins, CORS and rate limits").
 * Browsers send Origin on every cross-origin fetch, the SDK's; a same-origin GET may come without
 * one, and is judged by its Referer.
 */
export function readRequestOrigin(origin: string | undefined, referer: string | undefined): RequestOrigin {
  if (origin !== undefined && origin !== '') return { hostname: hostnameOf(origin), hasOrigin: true }
  return { hostname: hostnameOf(referer), hasOrigin: referer !== undefined && referer !== '' }
}

/**
 * Whether a site with these registered domains may be used from this hostname. An empty list
 * allows any origin (development); otherwise the hostname must be a listed domain or one of its
 * subdomains (listing example.com allows www.example.com), as Turnstile and reCAPTCHA do. A
 * request without any origin is let through here and scored instead (anomaly missing_origin);
 * one whose origin names no host while domains are listed is refused.
 */
export function isOriginAllowed(origin: RequestOrigin, domains: readonly string[]): boolean {
  if (domains.length === 0 || !origin.hasOrigin) return true
  const { hostname } = origin
  if (hostname === null) return false
  return domains.some((domain) => hostname === domain || hostname.endsWith(`.${domain}`))
}
