// The chart's time axis and legend in the browser's locale: uPlot's own labels are English and
// 12-hour ("3pm", "Nov 25") whatever the reader's language.

const DAY_SECONDS = 86_400

export interface ChartTimeFormat {
  /** Tick labels for ticks `incrementSeconds` apart: times, with the date under the first tick of each day. */
  ticks: (ticks: readonly number[], incrementSeconds: number) => string[]
  /** The legend's label of one bucket (its start, in seconds). */
  bucket: (seconds: number) => string
}

/**
 * Hourly buckets are read in the browser's zone; daily buckets are UTC days, so they are labelled
 * in UTC (local time would date them a day early west of Greenwich).
 */
export function chartTimeFormat(interval: 'hour' | 'day', locale?: string | string[]): ChartTimeFormat {
  const timeZone = interval === 'day' ? 'UTC' : undefined
  const day = new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', timeZone })
  const time = new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit', timeZone })
  const bucket = interval === 'day'
    ? new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'short', day: 'numeric', timeZone })
    : new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone })
  const at = (seconds: number) => new Date(seconds * 1000)
  return {
    ticks(ticks, incrementSeconds) {
      if (incrementSeconds >= DAY_SECONDS) return ticks.map((tick) => day.format(at(tick)))
      let previousDay = ''
      return ticks.map((tick) => {
        const date = at(tick)
        const dayLabel = day.format(date)
        const label = dayLabel === previousDay ? time.format(date) : `${time.format(date)}\n${dayLabel}`
        previousDay = dayLabel
        return label
      })
    },
    bucket: (seconds) => bucket.format(at(seconds)),
  }
}
