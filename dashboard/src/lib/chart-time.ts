// The chart's time axis and legend in the browser's locale: uPlot's own labels are English and
// 12-hour ("3pm", "Nov 25") whatever the reader's language.

const DAY_SECONDS = 86_400

export interface ChartTimeFormat {
  /** Tick labels for ticks `incrementSeconds` apart: times, with the date under the first tick of each day. */
  ticks: (ticks: readonly number[], incrementSeconds: number) => string[]
  /**
   * The legend's label of one bucket (its start, in seconds), with the zone's short name when its
   * offset changes among `times`, all the buckets' starts (seconds): a daylight-saving change.
   */
  bucket: (seconds: number, times?: ArrayLike<number>) => string
  /** The legend's name of the time axis, with its zone: "Hour (Europe/Berlin)", "Day (UTC)". */
  axisLabel: string
  /**
   * What a point is, in words for under the chart: the zone the times are in and, where an hour
   * of that zone is not a UTC hour (Asia/Kolkata, +5:30), that each point is a UTC hour, with the
   * minute it starts at there. `at`: the time (milliseconds) whose offset counts.
   */
  note: (at: number) => string
}

/** A reader of the zone's offset from UTC at a time (milliseconds), in minutes (330 for Asia/Kolkata). */
function offsetReaderOf(timeZone: string | undefined): (at: number) => number {
  const format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
  return (at) => {
    const name = format.formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? ''
    const match = /([+-])(\d{2}):?(\d{2})?/.exec(name)
    if (match === null) return 0
    return (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3] ?? 0))
  }
}

/** Whether the zone's offset changes among the times (milliseconds): a daylight-saving change among them. */
function isOffsetChangingAmong(offsetAt: (at: number) => number, times: readonly number[]): boolean {
  return new Set(times.map((time) => offsetAt(time))).size > 1
}

/**
 * The labels of hourly buckets (their starts, in milliseconds) in the zone: date, hour and minute,
 * and the zone's short name on each ("1:00 AM EDT", "1:00 AM EST") when its offset changes among
 * them: the hour a daylight-saving change repeats would otherwise have two equal labels.
 */
export function hourBucketLabels(times: readonly number[], locale?: string | string[], timeZone?: string): string[] {
  const isOffsetChanging = isOffsetChangingAmong(offsetReaderOf(timeZone), times)
  const format = new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone, ...(isOffsetChanging ? { timeZoneName: 'short' } : {}) })
  return times.map((time) => format.format(time))
}

/**
 * Hourly buckets are read in the browser's zone; daily buckets are UTC days, so they are labelled
 * in UTC (local time would date them a day early west of Greenwich).
 */
export function chartTimeFormat(interval: 'hour' | 'day', locale?: string | string[], browserZone?: string): ChartTimeFormat {
  const timeZone = interval === 'day' ? 'UTC' : browserZone
  const zoneName = new Intl.DateTimeFormat(locale, { timeZone: browserZone }).resolvedOptions().timeZone
  const day = new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', timeZone })
  const time = new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit', timeZone })
  const hourOptions: Intl.DateTimeFormatOptions = { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone }
  const bucket = interval === 'day'
    ? new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'short', day: 'numeric', timeZone })
    : new Intl.DateTimeFormat(locale, hourOptions)
  // With the zone's short name where the offset changes among the chart's buckets: the hour a
  // daylight-saving change repeats must not read as the same hour twice ("1:00 AM EDT", "1:00 AM EST").
  const bucketWithZone = new Intl.DateTimeFormat(locale, { ...hourOptions, timeZoneName: 'short' })
  const offsetAt = offsetReaderOf(timeZone)
  /** The last buckets judged (the chart's data, the same array until it changes) and whether the offset changes among them. */
  let judged: { times: ArrayLike<number>; isOffsetChanging: boolean } | undefined
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
    bucket(seconds, times = []) {
      if (judged?.times !== times) judged = { times, isOffsetChanging: interval === 'hour' && isOffsetChangingAmong(offsetAt, Array.from(times, (time) => time * 1000)) }
      return (judged.isOffsetChanging ? bucketWithZone : bucket).format(at(seconds))
    },
    axisLabel: interval === 'day' ? 'Day (UTC)' : `Hour (${zoneName})`,
    note(now) {
      if (interval === 'day') return 'Each point counts one UTC day; its date is the UTC date.'
      const minute = ((offsetReaderOf(zoneName)(now) % 60) + 60) % 60
      if (minute === 0) return `Times in ${zoneName}. Each point counts one hour.`
      return `Times in ${zoneName}. Each point counts one UTC hour, which begins at :${String(minute).padStart(2, '0')} here.`
    },
  }
}
