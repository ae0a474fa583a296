import { describe, expect, it } from 'vitest'
import { chartTimeFormat } from '../../dashboard/src/lib/chart-time.js'

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
