/** At most this many characters of a site's name in a file name: enough to tell sites apart. */
const MAX_SLUG_LENGTH = 40

/**
 * A site's name as part of a file name: lower-case ASCII letters and digits joined by dashes
 * ("Shop (EU)" -> "shop-eu"). Only these characters, so that the name goes into
 * Content-Disposition without quoting rules; `fallback` (the site's id) when nothing is left.
 */
export function fileNameSlug(name: string, fallback: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/^-+|-+$/g, '')
  return slug === '' ? fallback : slug
}

/** `tollgate-<parts>-<YYYY-MM-DD>.<extension>`, the day of `now` in UTC. */
export function exportFileName(parts: readonly string[], extension: string, now: Date): string {
  return `tollgate-${[...parts, now.toISOString().slice(0, 10)].join('-')}.${extension}`
}
