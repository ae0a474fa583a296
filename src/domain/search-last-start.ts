/**
 * In starts sorted ascending, the index of the last one that is <= value, or -1: a binary search,
 * for tables of ranges (the ASN table, a site's address lists).
 */
export function searchLastStart<Value>(starts: ArrayLike<Value>, value: Value): number {
  let low = 0
  let high = starts.length - 1
  let found = -1
  while (low <= high) {
    const middle = (low + high) >>> 1
    if ((starts[middle] as Value) <= value) {
      found = middle
      low = middle + 1
    } else {
      high = middle - 1
    }
  }
  return found
}
