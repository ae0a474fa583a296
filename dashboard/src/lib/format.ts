import { OTHER_VALUES } from '../api/types.js'

// Times are the browser's local time, in its locale. A time alone names its zone; the columns of
// log tables, where every row would repeat it, name it in their heading (timeZoneName).
const dateTime = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  timeZoneName: 'short',
})
const dateTimeWithSeconds = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' })
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })
const timeWithSeconds = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' })
const number = new Intl.NumberFormat()

/** The browser's time zone (Asia/Tokyo), for the headings of columns of local times. */
export const timeZoneName: string = dateTimeWithSeconds.resolvedOptions().timeZone ?? 'local time'

/** A date and time with its zone ("Nov 25, 2026, 8:21 AM GMT+9"), for sentences and short lists. */
export function formatDateTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—'
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date)
}

/** When a key or a passkey was last used: 'Never' before its first use. */
export function formatLastUsed(iso: string | null | undefined): string {
  return iso === null || iso === undefined ? 'Never' : formatDateTime(iso)
}

/** For logs, where many entries share a minute; the column's heading names the zone (timeZoneName). */
export function formatDateTimeWithSeconds(iso: string): string {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : dateTimeWithSeconds.format(date)
}

/**
 * As formatDateTimeWithSeconds, the date and the time apart ("Nov 30, 2026" and "7:30:56 AM"),
 * for a narrow column that shows them on two lines; null for a time that is not one.
 */
export function formatDateAndTimeWithSeconds(iso: string): { date: string; time: string } | null {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? null : { date: dateOnly.format(date), time: timeWithSeconds.format(date) }
}

export function formatNumber(value: number): string {
  return number.format(value)
}

export function formatPercent(part: number, whole: number): string {
  if (whole === 0) return '0%'
  const percent = Math.round((part / whole) * 100)
  // One block in 300 is not none, and 299 in 300 is not all.
  if (percent === 0 && part > 0) return '<1%'
  if (percent === 100 && part < whole) return '>99%'
  return `${percent}%`
}

const countryNames = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(undefined, { type: 'region' }) : undefined

/** "DE" becomes "Germany (DE)"; XX (no location known, such as a private address) is "Unknown". */
export function formatCountry(code: string | null | undefined): string {
  if (code === null || code === undefined || code === '' || code === 'XX') return 'Unknown'
  if (!/^[A-Z]{2}$/.test(code)) return code
  try {
    const name = countryNames?.of(code)
    return name === undefined || name === code ? code : `${name} (${code})`
  } catch {
    return code
  }
}

/** A ranked hostname or page action as shown: itself, or `otherLabel` ("Other hostnames") for the stats' OTHER_VALUES. */
export function formatRankedValue(value: string, otherLabel: string): string {
  return value === OTHER_VALUES ? otherLabel : value
}

const browsers: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/HeadlessChrome\//, 'Headless Chrome'],
  [/\b(?:Chrome|CriOS|Chromium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
]

const systems: [RegExp, string][] = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
]

/** "Firefox on Windows" for a session's User-Agent: enough to tell one's browsers apart. */
export function describeUserAgent(userAgent: string | null): string {
  if (userAgent === null || userAgent.trim() === '') return 'Unknown browser'
  const browser = browsers.find(([pattern]) => pattern.test(userAgent))?.[1]
  const system = systems.find(([pattern]) => pattern.test(userAgent))?.[1]
  if (browser === undefined && system === undefined) return userAgent.length > 60 ? `${userAgent.slice(0, 60)}…` : userAgent
  return [browser ?? 'A browser', system].filter((part) => part !== undefined).join(' on ')
}
