import { unreadableDateTimeMessage } from '../date-time-text.js'
import type { FieldIssue } from '../sites/site-input.js'

export type StatsInterval = 'hour' | 'day'

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

export const intervalMs: Record<StatsInterval, number> = { hour: HOUR_MS, day: DAY_MS }

/**
 * The longest range per interval: 31 days hourly or 92 days daily, so at most 745 hourly or 93
 * daily buckets (one more than the days' worth when the range starts inside a bucket), which
 * bounds both the answer and the rows one query aggregates.
 */
export const maxRangeMs: Record<StatsInterval, number> = { hour: 31 * DAY_MS, day: 92 * DAY_MS }

export const DEFAULT_RANGE_MS = DAY_MS

const EARLIEST_MS = 0
/**
 * The start of 9999's last day: a range ending later would be rounded up past the year 9999 to
 * whole hours or days, which the embedded database's driver writes as `+010000-...` and
 * PostgreSQL's parser refuses (a 500 on PGlite only).
 */
const LATEST_MS = Date.UTC(9999, 11, 31)

export interface StatsRange {
  from: Date
  to: Date
  interval: StatsInterval
  /** `to` was left out: the range runs up to the moment of the read. */
  endsNow?: boolean
}

export interface StatsQuery {
  from?: string
  to?: string
  interval?: StatsInterval
}

/** The start of the dashboard's "last 24 hours": the UTC hour 23 hours before the one `now` is in. */
export function recentDayStart(now: Date): Date {
  return new Date(bucketStartOf(now.getTime(), 'hour') - DEFAULT_RANGE_MS + HOUR_MS)
}

/**
 * The range a stats request asks for, with defaults, or why it cannot be served. The default is
 * the dashboard's "last 24 hours": the current UTC hour so far and the 23 before it, 24 hourly
 * buckets, whole hours each, which the rollups answer alone.
 */
export function resolveStatsRange(query: StatsQuery, now: Date): { range: StatsRange } | { issues: FieldIssue[] } {
  const tooPrecise = subMillisecondIssues(query)
  if (tooPrecise.length > 0) return { issues: tooPrecise }
  const interval = query.interval ?? 'hour'
  const to = query.to === undefined ? now : new Date(query.to)
  const from =
    query.from !== undefined
      ? new Date(query.from)
      : query.to === undefined
        ? recentDayStart(now)
        : new Date(to.getTime() - DEFAULT_RANGE_MS)
  const issues = rangeDateIssues({ from, to }, query)
  if (issues.length > 0) return { issues }
  if (from.getTime() >= to.getTime()) return { issues: [{ field: 'querystring.from', message: 'must be before to' }] }
  if (to.getTime() - from.getTime() > maxRangeMs[interval]) {
    const days = maxRangeMs[interval] / DAY_MS
    return { issues: [{ field: 'querystring.from', message: `the range may span at most ${days} days with interval=${interval}` }] }
  }
  return { range: { from, to, interval, ...(query.to === undefined ? { endsNow: true } : {}) } }
}

/**
 * A time with more than milliseconds (`12:00:00.123456Z`), after a `T` or the space the
 * date-time format also takes (`2026-12-01 00:00:00.1234567Z`). A Date holds milliseconds, so the rest
 * would be dropped without a word, and a range that ends at 12:00:00.1234567 would end a little
 * earlier than asked: refused, naming the parameter, rather than answered with other rows.
 */
const SUB_MILLISECOND = /[T ]\d{2}:\d{2}:\d{2}[.,]\d{4,}/i

/** The `from` and `to` of a query (the stats', the exports') that give more than milliseconds: every route taking a range refuses them alike. */
export function subMillisecondIssues(query: { from?: string; to?: string }): FieldIssue[] {
  return (['from', 'to'] as const)
    .filter((name) => SUB_MILLISECOND.test(query[name] ?? ''))
    .map((name) => ({ field: `querystring.${name}`, message: 'must give at most 3 digits of fractions of a second (milliseconds)' }))
}

/**
 * What is wrong with the dates of a range a query named (`from`, `to`; a left-out one is not
 * checked): not a date (`texts`, the query's, say why: a leap second), or outside the years the log can hold.
 */
export function rangeDateIssues(dates: { from?: Date; to?: Date }, texts: { from?: string; to?: string }): FieldIssue[] {
  const named = (['from', 'to'] as const).flatMap((name) => {
    const date = dates[name]
    return date === undefined ? [] : [{ name, field: `querystring.${name}`, date }]
  })
  const unreadable = named
    .filter(({ date }) => Number.isNaN(date.getTime()))
    .map(({ name, field }) => ({ field, message: unreadableDateTimeMessage(texts[name]) }))
  if (unreadable.length > 0) return unreadable
  // The log holds nothing older than the service, and PostgreSQL has no year 0: a range outside
  // these years is a mistake of the caller's, answered as such rather than as a failed query.
  return named
    .filter(({ date }) => date.getTime() < EARLIEST_MS || date.getTime() > LATEST_MS)
    .map(({ field }) => ({ field, message: 'must be from 1970-01-01 to 9999-12-31T00:00:00Z' }))
}

/** Start of the UTC hour or day that contains `time`, in epoch milliseconds. */
export function bucketStartOf(time: number, interval: StatsInterval): number {
  return Math.floor(time / intervalMs[interval]) * intervalMs[interval]
}

/**
 * The whole UTC hours a range overlaps: what counts kept per hour alone (Siteverify's) can be
 * read over. Wider than the range when either end falls inside an hour.
 */
export function wholeHoursOf(range: { from: Date; to: Date }): { from: Date; to: Date } {
  return { from: new Date(bucketStartOf(range.from.getTime(), 'hour')), to: new Date(Math.ceil(range.to.getTime() / HOUR_MS) * HOUR_MS) }
}

export const statsActions = ['allow', 'challenge', 'block', 'rejected'] as const
export type StatsAction = (typeof statsActions)[number]

export type ActionCounts = Record<StatsAction, number>

export interface BucketCount {
  bucketMs: number
  action: string
  count: number
}

export interface SeriesPoint extends ActionCounts {
  bucketMs: number
}

function emptyCounts(): ActionCounts {
  return { allow: 0, challenge: 0, block: 0, rejected: 0 }
}

function isStatsAction(action: string): action is StatsAction {
  return (statsActions as readonly string[]).includes(action)
}

/**
 * One point per bucket of the range, oldest first, zeros where nothing happened, so that charts
 * need no gap filling; and the totals over the whole range.
 */
export function buildSeries(counts: readonly BucketCount[], range: StatsRange): { series: SeriesPoint[]; totals: ActionCounts } {
  const step = intervalMs[range.interval]
  const byBucket = new Map<number, SeriesPoint>()
  for (let bucket = bucketStartOf(range.from.getTime(), range.interval); bucket < range.to.getTime(); bucket += step) {
    byBucket.set(bucket, { bucketMs: bucket, ...emptyCounts() })
  }
  const totals = emptyCounts()
  for (const { bucketMs, action, count } of counts) {
    const point = byBucket.get(bucketMs)
    if (point === undefined || !isStatsAction(action)) continue
    point[action] += count
    totals[action] += count
  }
  return { series: [...byBucket.values()], totals }
}
