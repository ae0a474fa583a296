import { AsyncLocalStorage } from 'node:async_hooks'
import { vi } from 'vitest'

const skews = new AsyncLocalStorage<number>()
const readRealClock = Date.now.bind(Date)
let isInstalled = false

/**
 * Runs `work` as on a machine whose clock is `skewMs` off (ahead when positive): every Date.now()
 * it calls, and every one called by what it starts (timers, promise continuations, Redis replies
 * awaited), reads that much more. An instance built inside, and its requests injected inside,
 * is an instance on that machine, its store's measurement of Redis's clock included. The clock is
 * faked (Date.now, which the service reads its clock by) rather than injected, so that a check
 * that reads it anywhere fails as it would in production; the rest of the process keeps the real one.
 */
export function onClockSkewedBy<T>(skewMs: number, work: () => T): T {
  if (!isInstalled) {
    vi.spyOn(Date, 'now').mockImplementation(() => readRealClock() + (skews.getStore() ?? 0))
    isInstalled = true
  }
  return skews.run(skewMs, work)
}

/** Puts Date.now back (afterAll). */
export function restoreClock(): void {
  if (!isInstalled) return
  vi.mocked(Date.now).mockRestore()
  isInstalled = false
}
