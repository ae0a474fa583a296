export const rangeNames = ['24h', '7d', '30d'] as const
export type RangeName = (typeof rangeNames)[number]

export const rangeLabels: Record<RangeName, string> = { '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' }

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

const ranges: Record<RangeName, { interval: 'hour' | 'day'; buckets: number }> = {
  '24h': { interval: 'hour', buckets: 24 },
  '7d': { interval: 'hour', buckets: 24 * 7 },
  '30d': { interval: 'day', buckets: 30 },
}

/**
 * The stats query for a range ending now. `to` is the end of the current bucket (the API's
 * buckets are UTC hours or days), so the newest bucket is complete in the answer and the range
 * holds exactly the expected number of buckets.
 */
export function queryOfRange(range: RangeName, now: Date = new Date()): { from: string; to: string; interval: 'hour' | 'day' } {
  const { interval, buckets } = ranges[range]
  const step = interval === 'hour' ? HOUR_MS : DAY_MS
  const to = Math.ceil((now.getTime() + 1) / step) * step
  return { from: new Date(to - buckets * step).toISOString(), to: new Date(to).toISOString(), interval }
}
