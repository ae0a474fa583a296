import type { KeyValueStore } from '../storage/ports.js'

export interface RateLimitRule {
  /** Requests allowed per window. */
  limit: number
  windowMs: number
}

export interface RateLimitVerdict {
  isAllowed: boolean
  remaining: number
  /** Seconds until the window resets, for the Retry-After header. */
  retryAfterSeconds: number
  /** The window's counter this request was counted on, for refundRateLimit. */
  counterKey: string
}

/**
 * Fixed-window counting on the key-value store: one atomic increment-with-expiry per request,
 * so every instance sharing a Redis shares the budget. The window is part of the key, so a
 * window's counter expires on its own. Windows are cut by the store's clock: instances whose
 * clocks differ would otherwise count one client in two windows at once, each up to the limit.
 */
export async function consumeRateLimit(
  store: KeyValueStore,
  key: string,
  rule: RateLimitRule,
  now: number = store.now(),
): Promise<RateLimitVerdict> {
  const windowIndex = Math.floor(now / rule.windowMs)
  const counterKey = `ratelimit:${key}:${windowIndex}`
  const count = await store.increment(counterKey, rule.windowMs)
  const resetsAt = (windowIndex + 1) * rule.windowMs
  return {
    isAllowed: count <= rule.limit,
    remaining: Math.max(0, rule.limit - count),
    retryAfterSeconds: Math.max(1, Math.ceil((resetsAt - now) / 1000)),
    counterKey,
  }
}

/**
 * Gives back a request that consumeRateLimit counted and that turned out to spend nothing the
 * budget guards (a right password is no guess). The counter is its window's: a refund made after
 * the window has turned leaves the new window's count as it is.
 */
export async function refundRateLimit(store: KeyValueStore, counterKey: string, rule: RateLimitRule): Promise<void> {
  await store.increment(counterKey, rule.windowMs, -1)
}
