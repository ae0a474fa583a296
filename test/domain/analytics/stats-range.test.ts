import { describe, expect, it } from 'vitest'
import { decodeLogCursor, encodeLogCursor } from '../../../src/domain/analytics/log-cursor.js'
import { buildSeries, resolveStatsRange, wholeHoursOf } from '../../../src/domain/analytics/stats-range.js'

const HOUR_MS = 3_600_000
const now = new Date('2025-05-05T10:30:00.000Z')

describe('stats ranges', () => {
  it('defaults to the current UTC hour so far and the 23 before it, hourly, ending now', () => {
    const currentHour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS
    expect(resolveStatsRange({}, now)).toEqual({
      range: { from: new Date(currentHour - 23 * HOUR_MS), to: now, interval: 'hour', endsNow: true },
    })
    // With a to of the caller's, the 24 hours before it.
    expect(resolveStatsRange({ to: now.toISOString() }, now)).toEqual({
      range: { from: new Date(now.getTime() - 24 * HOUR_MS), to: now, interval: 'hour' },
    })
  })

  it('takes from, to and interval', () => {
    expect(resolveStatsRange({ from: '2025-05-01T00:00:00Z', to: '2025-05-03T00:00:00Z', interval: 'day' }, now)).toEqual({
      range: { from: new Date('2025-05-01T00:00:00Z'), to: new Date('2025-05-03T00:00:00Z'), interval: 'day' },
    })
  })

  it('refuses an empty or reversed range, unparseable times and ranges beyond the cap', () => {
    expect(resolveStatsRange({ from: '2025-05-01T00:00:00Z', to: '2025-05-01T00:00:00Z' }, now)).toHaveProperty('issues')
    expect(resolveStatsRange({ from: 'soon' }, now)).toHaveProperty('issues')
    expect(resolveStatsRange({ from: '2025-03-01T00:00:00Z', to: '2025-04-01T00:00:00Z', interval: 'hour' }, now)).toHaveProperty('range')
    expect(resolveStatsRange({ from: '2025-03-01T00:00:00Z', to: '2025-04-02T00:00:00Z', interval: 'hour' }, now)).toHaveProperty('issues')
    expect(resolveStatsRange({ from: '2025-01-01T00:00:00Z', to: '2025-04-03T00:00:00Z', interval: 'day' }, now)).toHaveProperty('range')
    expect(resolveStatsRange({ from: '2025-01-01T00:00:00Z', to: '2025-04-03T00:00:01Z', interval: 'day' }, now)).toHaveProperty('issues')
  })

  it('refuses times before 1970 or after 9999 (PostgreSQL has no year 0), naming the field', () => {
    expect(resolveStatsRange({ from: '0000-01-01T00:00:00Z', to: '0000-01-02T00:00:00Z' }, now)).toEqual({
      issues: [
        { field: 'querystring.from', message: 'must be from 1970-01-01 to 9999-12-31T00:00:00Z' },
        { field: 'querystring.to', message: 'must be from 1970-01-01 to 9999-12-31T00:00:00Z' },
      ],
    })
    expect(resolveStatsRange({ from: '1969-12-31T23:00:00Z', to: '1970-01-01T01:00:00Z' }, now)).toHaveProperty('issues')
    expect(resolveStatsRange({ from: '1970-01-01T00:00:00Z', to: '1970-01-02T00:00:00Z' }, now)).toHaveProperty('range')
    expect(resolveStatsRange({ from: '+010000-01-01T00:00:00Z', to: '+010000-01-02T00:00:00Z' }, now)).toHaveProperty('issues')
    // Ranges are rounded to whole hours and days: 9999's last day would round into the year 10000.
    expect(resolveStatsRange({ to: '9999-12-31T23:59:59.999Z' }, now)).toEqual({ issues: [{ field: 'querystring.to', message: 'must be from 1970-01-01 to 9999-12-31T00:00:00Z' }] })
    expect(resolveStatsRange({ from: '9999-12-30T00:00:00Z', to: '9999-12-31T00:00:00Z' }, now)).toHaveProperty('range')
  })

  it('widens a range to the whole UTC hours it overlaps, and leaves whole hours as they are', () => {
    const range = (from: string, to: string) => ({ from: new Date(from), to: new Date(to) })
    expect(wholeHoursOf(range('2026-11-30T07:00:10Z', '2026-11-30T07:00:30Z'))).toEqual(range('2026-11-30T07:00:00Z', '2026-11-30T08:00:00Z'))
    expect(wholeHoursOf(range('2026-11-30T07:00:00Z', '2026-11-30T09:00:00Z'))).toEqual(range('2026-11-30T07:00:00Z', '2026-11-30T09:00:00Z'))
    expect(wholeHoursOf(range('2026-11-30T06:59:59.999Z', '2026-11-30T09:00:00.001Z'))).toEqual(range('2026-11-30T06:00:00Z', '2026-11-30T10:00:00Z'))
  })

  it('refuses more than milliseconds, naming the parameter, after a T or a space', () => {
    for (const from of ['2026-11-30T07:00:00.123456Z', '2026-11-30 07:00:00.1234567Z', '2026-11-30t07:00:00,1234Z']) {
      expect(resolveStatsRange({ from, to: '2026-11-30T08:00:00Z' }, now), from).toEqual({
        issues: [{ field: 'querystring.from', message: 'must give at most 3 digits of fractions of a second (milliseconds)' }],
      })
    }
  })

  it('names a leap second as not supported, and other unreadable times as not ISO 8601', () => {
    expect(resolveStatsRange({ from: '2016-12-31 23:59:60Z', to: '2017-01-01T01:00:00Z' }, now)).toEqual({
      issues: [{ field: 'querystring.from', message: 'must not be a leap second (:60), which is not supported: give :59.999 or the next minute' }],
    })
    expect(resolveStatsRange({ from: '2016-12-31T00:00:00+02', to: '2017-01-01T01:00:00Z' }, now)).toEqual({
      issues: [{ field: 'querystring.from', message: 'must be an ISO 8601 date-time, such as 2027-01-01T00:00:00Z' }],
    })
  })

  it('fills every bucket from the one containing from, and adds up the totals', () => {
    const range = { from: new Date('2025-05-05T08:30:00Z'), to: new Date('2025-05-05T10:15:00Z'), interval: 'hour' as const }
    const eight = Date.parse('2025-05-05T08:00:00Z')
    const { series, totals } = buildSeries(
      [
        { bucketMs: eight, action: 'allow', count: 3 },
        { bucketMs: eight + 2 * HOUR_MS, action: 'block', count: 1 },
        { bucketMs: eight, action: 'unknown', count: 9 },
      ],
      range,
    )
    expect(series).toEqual([
      { bucketMs: eight, allow: 3, challenge: 0, block: 0, rejected: 0 },
      { bucketMs: eight + HOUR_MS, allow: 0, challenge: 0, block: 0, rejected: 0 },
      { bucketMs: eight + 2 * HOUR_MS, allow: 0, challenge: 0, block: 1, rejected: 0 },
    ])
    expect(totals).toEqual({ allow: 3, challenge: 0, block: 1, rejected: 0 })
  })
})

describe('log cursors', () => {
  it('round-trips and stays opaque', () => {
    const cursor = { createdAtMicros: 1_746_441_000_123_456, id: '0b9e4c1e-8f3a-4d51-9a57-2d3f4e5a6b7c' }
    const text = encodeLogCursor(cursor)
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(decodeLogCursor(text)).toEqual(cursor)
  })

  it.each(['', 'not base64!', Buffer.from('123').toString('base64url'), Buffer.from('abc.0b9e4c1e-8f3a-4d51-9a57-2d3f4e5a6b7c').toString('base64url'), Buffer.from('1.2.3').toString('base64url')])(
    'refuses %j',
    (text) => {
      expect(decodeLogCursor(text)).toBeUndefined()
    },
  )
})
