/** A count as a key-value store keeps it (text); anything else (absent, or not a count) is 0. */
export function countOf(stored: string | null | undefined): number {
  const count = Number(stored ?? 0)
  return Number.isSafeInteger(count) && count > 0 ? count : 0
}
