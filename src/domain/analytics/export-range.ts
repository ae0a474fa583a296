import type { FieldIssue } from '../sites/site-input.js'
import { rangeDateIssues, subMillisecondIssues } from './stats-range.js'

/** The rows of an export: from <= created_at < to, either end left open when not given. */
export interface ExportRange {
  from?: Date
  to?: Date
}

/**
 * The range an export asks for, or why it cannot be served. Half-open as the stats' ranges are,
 * so that exports of consecutive ranges (a day, then the next) hold every row once. from = to
 * is an empty range, not a mistake; from after to is one.
 */
export function resolveExportRange(query: { from?: string; to?: string }): { range: ExportRange } | { issues: FieldIssue[] } {
  const tooPrecise = subMillisecondIssues(query)
  if (tooPrecise.length > 0) return { issues: tooPrecise }
  const range: ExportRange = {
    ...(query.from === undefined ? {} : { from: new Date(query.from) }),
    ...(query.to === undefined ? {} : { to: new Date(query.to) }),
  }
  const issues = rangeDateIssues(range, query)
  if (issues.length > 0) return { issues }
  if (range.from !== undefined && range.to !== undefined && range.from.getTime() > range.to.getTime()) {
    return { issues: [{ field: 'querystring.from', message: 'must not be after to' }] }
  }
  return { range }
}
