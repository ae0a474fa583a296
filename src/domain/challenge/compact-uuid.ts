/**
 * UUIDs as 22 base64url characters instead of 36: challenge records and tokens carry site and
 * challenge ids, and every byte of a record counts against the Redis memory budget.
 */
export function compactUuid(uuid: string): string {
  return Buffer.from(uuid.replaceAll('-', ''), 'hex').toString('base64url')
}

/**
 * compactUuid for ids that recur on every request (site ids): remembered, since the conversion
 * costs as much as the rest of encoding a challenge record.
 */
const recurring = new Map<string, string>()
export function compactRecurringUuid(uuid: string): string {
  let compact = recurring.get(uuid)
  if (compact === undefined) {
    compact = compactUuid(uuid)
    if (recurring.size >= 10_000) recurring.clear()
    recurring.set(uuid, compact)
  }
  return compact
}

/** The canonical (lowercase, hyphenated) UUID, or undefined when the text is not a compacted one. */
export function expandUuid(compact: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{21}[AQgw]$/.test(compact)) return undefined
  const hex = Buffer.from(compact, 'base64url').toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
