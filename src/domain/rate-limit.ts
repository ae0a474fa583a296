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
  const count = await store.increment(`ratelimit:${key}:${windowIndex}`, rule.windowMs)
  const resetsAt = (windowIndex + 1) * rule.windowMs
  return {
    isAllowed: count <= rule.limit,
    remaining: Math.max(0, rule.limit - count),
    retryAfterSeconds: Math.max(1, Math.ceil((resetsAt - now) / 1000)),
  }
}
