/**
 * Text PostgreSQL cannot store: a NUL character (refused in text and jsonb), or half of a UTF-16
 * surrogate pair (refused in jsonb as an escape; in text it would be silently replaced, so the
 * stored value would differ from the one sent).
 */
// eslint-disable-next-line no-control-regex -- the NUL character is what it looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * The dotted path of the first string within `value`, keys included, that PostgreSQL cannot store
 * as sent, or undefined when there is none. Paths are named as validation errors name fields:
 * `settings.webhookUrl` and `domains.1` within a body (path ''), `querystring.from` without.
 * '' is the value itself.
 */
export function findUnstorableText(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? path : undefined
  if (typeof value !== 'object' || value === null) return undefined
  const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item] as const) : Object.entries(value)
  for (const [key, item] of entries) {
    if (UNSTORABLE.test(key)) return path
    const found = findUnstorableText(item, path === '' ? key : `${path}.${key}`)
    if (found !== undefined) return found
  }
  return undefined
}
