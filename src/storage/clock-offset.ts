import { CLOCK_SKEW_MARGIN_MS } from '../domain/siteverify/redeem-token.js'
import type { KeyValueStore } from './ports.js'

/**
 * How far this instance's clock must be from the store's before it is told of (a warning, and
 * tollgate_clock_offset_seconds shows it at any time): half the clock-skew margin, so that an
 * operator hears of a drifting clock well before the margin, beyond which tokens stamped by
 * instances of an earlier release (by their own clocks) could be refused or outlive their marker.
 */
const CLOCK_OFFSET_WARNING_MS = CLOCK_SKEW_MARGIN_MS / 2

/** How far this instance's clock runs ahead of the store's (ms; negative when behind), as last measured. */
export function clockOffsetMsOf(store: KeyValueStore): number {
  return Date.now() - store.now()
}

/** The warning for an offset beyond CLOCK_OFFSET_WARNING_MS, or undefined for one within it. */
export function clockOffsetWarningOf(offsetMs: number): string | undefined {
  if (Math.abs(offsetMs) <= CLOCK_OFFSET_WARNING_MS) return undefined
  const seconds = Math.round(Math.abs(offsetMs) / 1000)
  return (
    `this instance's clock is ${seconds} s ${offsetMs > 0 ? 'ahead of' : 'behind'} Redis's: tokens are stamped and judged by Redis's clock, ` +
    'other times by this one; run NTP on every instance (docs/deploying.md, "Clocks")'
  )
}
