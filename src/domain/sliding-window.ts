/**
 * A count over the sliding window that ends at `now`, estimated from fixed windows: the share of
 * the previous window that it still covers, 1 at the current window's start and towards 0 at its
 * end (the previous window's count taken as spread evenly over it).
 */
export function previousWindowShare(now: number, windowMs: number): number {
  return 1 - (now % windowMs) / windowMs
}
