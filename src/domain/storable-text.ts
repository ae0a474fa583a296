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
  // Depth first, in order, with a stack of its own: a body nested thousands of levels deep (16 KiB
  // allow 8,000) would overflow the call stack of a recursive walk.
  const pending: [unknown, string][] = [[value, path]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, itemPath] = next
    if (typeof item === 'string') {
      if (UNSTORABLE.test(item)) return itemPath
      continue
    }
    if (typeof item !== 'object' || item === null) continue
    const entries: (readonly [string, unknown])[] = Array.isArray(item) ? item.map((member: unknown, index) => [String(index), member] as const) : Object.entries(item)
    if (entries.some(([key]) => UNSTORABLE.test(key))) return itemPath
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, member] = entries[index]!
      pending.push([member, itemPath === '' ? key : `${itemPath}.${key}`])
    }
  }
  return undefined
}

/**
 * Whether PostgreSQL can take a string as sent: for a lookup by a string from a request, which
 * names nothing when it cannot be stored (a NUL is a database error, half of a surrogate pair
 * would be replaced and could match another row's value).
 */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value)
}
