import { useEffect, useState } from 'preact/hooks'

/** Where the app is mounted; the service serves index.html for every path below it. */
export const BASE_PATH = '/dashboard'

export type SiteTab = 'analytics' | 'log' | 'settings' | 'webhook' | 'integration' | 'members'
export const siteTabs: readonly SiteTab[] = ['analytics', 'log', 'settings', 'webhook', 'integration', 'members']

export type Route =
  | { name: 'login' }
  | { name: 'signup' }
  | { name: 'sites' }
  | { name: 'new-site' }
  | { name: 'site'; siteId: string; tab: SiteTab }
  | { name: 'api-keys' }
  | { name: 'activity' }
  | { name: 'account' }
  | { name: 'invite' }
  | { name: 'not-found' }

export function parseRoute(pathname: string): Route {
  const path = pathname.startsWith(BASE_PATH) ? pathname.slice(BASE_PATH.length) : pathname
  const parts = path.split('/').filter((part) => part !== '').map(decodeURIComponent)
  const [first, second, third] = parts
  if (first === undefined) return { name: 'sites' }
  if (parts.length === 1 && first === 'login') return { name: 'login' }
  if (parts.length === 1 && first === 'signup') return { name: 'signup' }
  if (parts.length === 1 && first === 'api-keys') return { name: 'api-keys' }
  if (parts.length === 1 && first === 'activity') return { name: 'activity' }
  if (parts.length === 1 && first === 'account') return { name: 'account' }
  if (parts.length === 1 && first === 'invite') return { name: 'invite' }
  if (parts.length === 1 && first === 'sites') return { name: 'sites' }
  if (first === 'sites' && second === 'new' && parts.length === 2) return { name: 'new-site' }
  if (first === 'sites' && second !== undefined && parts.length <= 3) {
    const tab = third ?? 'analytics'
    if ((siteTabs as readonly string[]).includes(tab)) return { name: 'site', siteId: second, tab: tab as SiteTab }
  }
  return { name: 'not-found' }
}

export function pathOf(route: Route): string {
  switch (route.name) {
    case 'login':
      return `${BASE_PATH}/login`
    case 'signup':
      return `${BASE_PATH}/signup`
    case 'sites':
      return `${BASE_PATH}/`
    case 'new-site':
      return `${BASE_PATH}/sites/new`
    case 'site':
      return `${BASE_PATH}/sites/${encodeURIComponent(route.siteId)}${route.tab === 'analytics' ? '' : '/' + route.tab}`
    case 'api-keys':
      return `${BASE_PATH}/api-keys`
    case 'activity':
      return `${BASE_PATH}/activity`
    case 'account':
      return `${BASE_PATH}/account`
    case 'invite':
      return `${BASE_PATH}/invite`
    case 'not-found':
      return `${BASE_PATH}/`
  }
}

const NAVIGATE_EVENT = 'tollgate:navigate'

let isInAppNavigation = false

/** Whether the page changed through the app since load (not the first render). */
export function hasNavigatedInApp(): boolean {
  return isInAppNavigation
}

/** The route's path with a query for its view (`?reference=…`, read by useAddressParam), if any. */
export function hrefOf(route: Route, query?: Record<string, string>): string {
  const search = query === undefined ? '' : new URLSearchParams(query).toString()
  return search === '' ? pathOf(route) : `${pathOf(route)}?${search}`
}

export function navigate(route: Route, options: { replace?: boolean; query?: Record<string, string> } = {}): void {
  const href = hrefOf(route, options.query)
  isInAppNavigation = true
  if (href !== window.location.pathname + (options.query === undefined ? '' : window.location.search)) {
    if (options.replace === true) window.history.replaceState(null, '', href)
    else window.history.pushState(null, '', href)
  }
  window.dispatchEvent(new Event(NAVIGATE_EVENT))
}

/**
 * Puts the route's path in the address bar without leaving the page on screen: what a reload,
 * a bookmark or a copied link should open from here on (the site just created, not its form).
 */
export function replaceAddress(route: Route): void {
  window.history.replaceState(null, '', pathOf(route))
}

/**
 * A view's choice kept in the address's query (`?range=7d`), so that a reload, a bookmark or a
 * copied link opens the same view. One of `values` (or a text they accept), else `fallback` (which
 * the address leaves out); a change replaces the address rather than adding a history entry.
 */
export function useAddressParam<Value extends string>(
  name: string,
  values: readonly Value[] | ((text: string) => text is Value),
  fallback: Value,
): [Value, (value: Value) => void] {
  const write = (next: Value) => {
    const url = new URL(window.location.href)
    if (next === fallback) url.searchParams.delete(name)
    else url.searchParams.set(name, next)
    window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash)
  }
  const [value, setValue] = useState<Value>(() => {
    const found = new URLSearchParams(window.location.search).get(name)
    const isValue = typeof values === 'function' ? values : (text: string): text is Value => (values as readonly string[]).includes(text)
    if (found === null || isValue(found)) return found ?? fallback
    // A value this page does not take (an old bookmark's, a typo) leaves the address, which
    // would otherwise carry it on into every link and reload made from here.
    write(fallback)
    return fallback
  })
  const change = (next: Value) => {
    write(next)
    setValue(next)
  }
  return [value, change]
}

/** The current route; re-renders on link clicks, back and forward. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.pathname))
  useEffect(() => {
    const update = () => {
      isInAppNavigation = true
      setRoute(parseRoute(window.location.pathname))
    }
    window.addEventListener('popstate', update)
    window.addEventListener(NAVIGATE_EVENT, update)
    return () => {
      window.removeEventListener('popstate', update)
      window.removeEventListener(NAVIGATE_EVENT, update)
    }
  }, [])
  return route
}
