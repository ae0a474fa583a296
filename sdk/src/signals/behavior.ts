/**
 * Passive interaction signals. Only counts and timing statistics leave the page: never which
 * keys were pressed, where the pointer went, or what was typed.
 */
export interface BehaviorData {
  mouseMovements: number
  keystrokes: number
  clicks: number
  scrolls: number
  touches: number
  /** Focus, blur and visibility changes of the page and its fields. */
  focusChanges: number
  /** Events dispatched by scripts rather than the user (Event.isTrusted false). */
  untrustedEvents: number
  timeOnPageMs: number
  /** Time from page start to the first interaction, or -1 without any. */
  firstInteractionMs: number
  /** Mean and standard deviation of the gaps between events; scripted input is often regular. */
  mouseIntervalMeanMs: number
  mouseIntervalStdMs: number
  keyIntervalMeanMs: number
  keyIntervalStdMs: number
}

/** Running mean and variance (Welford), so no list of timestamps is kept. */
class IntervalStatistics {
  private count = 0
  private mean = 0
  private squares = 0
  private last = -1

  record(time: number): void {
    if (this.last >= 0) {
      const gap = time - this.last
      this.count++
      const delta = gap - this.mean
      this.mean += delta / this.count
      this.squares += delta * (gap - this.mean)
    }
    this.last = time
  }

  meanMs(): number {
    return Math.round(this.mean)
  }

  stdMs(): number {
    return this.count < 2 ? 0 : Math.round(Math.sqrt(this.squares / (this.count - 1)))
  }
}

const counts = { mouseMovements: 0, keystrokes: 0, clicks: 0, scrolls: 0, touches: 0, focusChanges: 0, untrustedEvents: 0 }
const mouseIntervals = new IntervalStatistics()
const keyIntervals = new IntervalStatistics()
let firstInteraction = -1

function noticed(event: Event): void {
  if (firstInteraction < 0) firstInteraction = event.timeStamp
}

function interacted(event: Event): void {
  if (!event.isTrusted) counts.untrustedEvents++
  noticed(event)
}

const handlers: [string, (event: Event) => void][] = [
  ['mousemove', (event) => { counts.mouseMovements++; mouseIntervals.record(event.timeStamp); interacted(event) }],
  ['keydown', (event) => { counts.keystrokes++; keyIntervals.record(event.timeStamp); interacted(event) }],
  ['pointerdown', (event) => { counts.clicks++; interacted(event) }],
  // Not counted among the untrusted: pages dispatch scroll events themselves (lazy loading), and a
  // script's scrollBy() makes trusted ones, so neither kind tells a person from a script.
  ['scroll', (event) => { counts.scrolls++; noticed(event) }],
  ['wheel', (event) => { counts.scrolls++; interacted(event) }],
  ['touchstart', (event) => { counts.touches++; interacted(event) }],
  ['focusin', () => { counts.focusChanges++ }],
  ['focusout', () => { counts.focusChanges++ }],
  ['visibilitychange', () => { counts.focusChanges++ }],
]

/**
 * Starts listening; the listeners are passive and never delay the page. Called once, in a browser,
 * by the module every build loads (index.ts), which checks for the window.
 */
export function startBehaviorCollection(): void {
  for (const [type, handler] of handlers) window.addEventListener(type, handler, { capture: true, passive: true })
}

export function snapshotBehavior(): BehaviorData {
  return {
    ...counts,
    timeOnPageMs: Math.round(performance.now()),
    firstInteractionMs: Math.round(firstInteraction),
    mouseIntervalMeanMs: mouseIntervals.meanMs(),
    mouseIntervalStdMs: mouseIntervals.stdMs(),
    keyIntervalMeanMs: keyIntervals.meanMs(),
    keyIntervalStdMs: keyIntervals.stdMs(),
  }
}
