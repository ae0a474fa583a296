import { describe, expect, it } from 'vitest'
import { chartTimeFormat, hourBucketLabels } from '../../dashboard/src/lib/chart-time.js'

const seconds = (iso: string) => Date.parse(iso) / 1000

describe("the chart's time labels", () => {
  it('follow the locale: 24-hour times and day-first dates in German, not uPlot\'s English', () => {
    const format = chartTimeFormat('day', 'de-DE')
    const ticks = [seconds('2026-11-24T00:00:00Z'), seconds('2026-11-25T00:00:00Z')]
    expect(format.ticks(ticks, 86_400)).toEqual(['24. Nov.', '25. Nov.'])
    expect(format.bucket(ticks[1] ?? 0)).toBe('25. Nov. 2026')
    expect(chartTimeFormat('day', 'en-US').ticks(ticks, 86_400)).toEqual(['Nov 24', 'Nov 25'])
    expect(chartTimeFormat('day', 'ja-JP').ticks(ticks, 86_400)).toEqual(['11月24日', '11月25日'])
  })

  it('label daily buckets in UTC, the days they count, whatever the browser\'s zone', () => {
    // Midnight UTC is the evening before west of Greenwich; the bucket is still the 25th.
    expect(chartTimeFormat('day', 'en-US').bucket(seconds('2026-11-25T00:00:00Z'))).toBe('Nov 25, 2026')
  })

  it("put the date under an hour's time where a day begins, and times alone in between", () => {
    const format = chartTimeFormat('hour', 'de-DE')
    const ticks = ['2026-11-24T20:00:00', '2026-11-24T22:00:00', '2026-11-25T00:00:00', '2026-11-25T02:00:00'].map((local) => new Date(local).getTime() / 1000)
    expect(format.ticks(ticks, 7_200)).toEqual(['20:00\n24. Nov.', '22:00', '0:00\n25. Nov.', '2:00'])
    expect(format.bucket(ticks[0] ?? 0)).toBe('24. Nov., 20:00')
    expect(chartTimeFormat('hour', 'en-US').ticks(ticks.slice(0, 2), 7_200)).toEqual(['8:00 PM\nNov 24', '10:00 PM'])
  })
})

describe("the chart's time zone", () => {
  const november = Date.parse('2026-11-25T12:00:00Z')

  it("names the browser's zone on the hourly axis, and UTC on the daily one", () => {
    expect(chartTimeFormat('hour', 'en-US', 'Europe/Berlin').axisLabel).toBe('Hour (Europe/Berlin)')
    expect(chartTimeFormat('day', 'en-US', 'Europe/Berlin').axisLabel).toBe('Day (UTC)')
    expect(chartTimeFormat('hour', 'en-US', 'Europe/Berlin').note(november)).toBe('Times in Europe/Berlin. Each point counts one hour.')
    expect(chartTimeFormat('day', 'en-US', 'Europe/Berlin').note(november)).toBe('Each point counts one UTC day; its date is the UTC date.')
  })

  it('says the points are UTC hours where a local hour is not one: they begin at :30 in India, :45 in Nepal', () => {
    // ICU may name the zones by their older names, Asia/Calcutta and Asia/Katmandu.
    expect(chartTimeFormat('hour', 'en-US', 'Asia/Kolkata').note(november)).toMatch(/^Times in Asia\/(Kolkata|Calcutta)\. Each point counts one UTC hour, which begins at :30 here\.$/)
    expect(chartTimeFormat('hour', 'en-US', 'Asia/Kathmandu').note(november)).toMatch(/^Times in Asia\/Kath?mandu\. Each point counts one UTC hour, which begins at :45 here\.$/)
    // West of Greenwich too (Newfoundland, -3:30): the hour begins at :30.
    expect(chartTimeFormat('hour', 'en-US', 'America/St_Johns').note(november)).toContain('begins at :30 here')
  })
})

describe('the hours of a daylight-saving change', () => {
  // New York leaves daylight saving time on 2026-11-01: 1:00 AM comes twice, 05:00Z (EDT) and 06:00Z (EST).
  const hours = ['2026-11-01T04:00:00Z', '2026-11-01T05:00:00Z', '2026-11-01T06:00:00Z', '2026-11-01T07:00:00Z'].map(Date.parse)

  it("name the zone in the table's labels when its offset changes in the range, so the repeated hour reads twice apart", () => {
    const labels = hourBucketLabels(hours, 'en-US', 'America/New_York')
    expect(labels).toEqual(['Nov 1, 12:00 AM EDT', 'Nov 1, 01:00 AM EDT', 'Nov 1, 01:00 AM EST', 'Nov 1, 02:00 AM EST'])
    expect(new Set(labels).size).toBe(hours.length)
  })

  it("leave the zone out of the table's labels where the offset holds (the heading names it)", () => {
    const labels = hourBucketLabels(hours.slice(2), 'en-US', 'America/New_York')
    expect(labels).toEqual(['Nov 1, 01:00 AM', 'Nov 1, 02:00 AM'])
    expect(hourBucketLabels(hours, 'en-US', 'Asia/Kolkata')).toEqual(['Nov 1, 09:30 AM', 'Nov 1, 10:30 AM', 'Nov 1, 11:30 AM', 'Nov 1, 12:30 PM'])
  })

  it("tell the repeated hour apart in the chart's legend, and name no zone where the offset holds", () => {
    const format = chartTimeFormat('hour', 'en-US', 'America/New_York')
    const chartTimes = hours.map((time) => time / 1000)
    expect(chartTimes.slice(1, 3).map((time) => format.bucket(time, chartTimes))).toEqual(['Nov 1, 1:00 AM EDT', 'Nov 1, 1:00 AM EST'])
    const afterTheChange = chartTimes.slice(2)
    expect(afterTheChange.map((time) => format.bucket(time, afterTheChange))).toEqual(['Nov 1, 1:00 AM', 'Nov 1, 2:00 AM'])
    // Daily buckets are UTC days: no zone to name.
    expect(chartTimeFormat('day', 'en-US', 'America/New_York').bucket(chartTimes[0] ?? 0, chartTimes)).toBe('Nov 1, 2026')
  })
})
