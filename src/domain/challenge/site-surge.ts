import type { KeyValueStore } from '../../storage/ports.js'

/**
 * Surge protection: while a site receives more challenge requests per minute, across all
 * instances, than its `surgeChallengesPerMinute`, every challenge of the site is harder: one bit
 * at the threshold and one more per doubling of it, at most SURGE_MAX_BITS. A client's own
 * history (its rate, its blocks) cannot see a botnet that sends each address's requests slowly;
 * the site's total can. A surge says nothing about any one visitor, so it raises the work only,
 * never a score.
 */
export const SURGE_MAX_BITS = 4

/** The bits a site's rate adds to its challenges; 0 below the threshold or when it is 0 (off). */
export function surgeBits(challengesPerMinute: number, threshold: number): number {
  if (threshold <= 0 || challengesPerMinute < threshold) return 0
  return Math.min(SURGE_MAX_BITS, 1 + Math.floor(Math.log2(challengesPerMinute / threshold)))
}

/** The counts of one site as the store last answered, by window of the store's clock. */
interface StoredCounts {
  windowIndex: number
  current: number
  previous: number
}

/**
 * Counts the challenge requests of sites with surge protection on, for the whole fleet: each
 * instance counts in memory and adds its counts to the store's per-minute counters every second
 * or so (flush), reading back the fleet's totals, so the request path touches no store. The rate
 * is a sliding minute: the current window's count plus the share of the previous window's that
 * the last minute still covers. An instance sees the others' requests a flush late.
 */
export class SurgeMeter {
  private readonly unwritten = new Map<string, number>()
  private readonly stored = new Map<string, StoredCounts>()

  constructor(
    private readonly store: KeyValueStore,
    private readonly windowMs = 60_000,
  ) {}

  /** Counts one challenge request of the site and returns the site's rate per window, this request included. */
  count(siteId: string, now: number = this.store.now()): number {
    this.unwritten.set(siteId, (this.unwritten.get(siteId) ?? 0) + 1)
    return this.rate(siteId, now)
  }

  /** The site's requests over the last window: the fleet's as last read, and this instance's since. */
  rate(siteId: string, now: number = this.store.now()): number {
    const windowIndex = Math.floor(now / this.windowMs)
    const stored = this.stored.get(siteId)
    let current = 0
    let previous = 0
    if (stored?.windowIndex === windowIndex) {
      current = stored.current
      previous = stored.previous
    } else if (stored?.windowIndex === windowIndex - 1) {
      previous = stored.current
    }
    const covered = 1 - (now - windowIndex * this.windowMs) / this.windowMs
    return current + (this.unwritten.get(siteId) ?? 0) + Math.floor(previous * covered)
  }

  /**
   * Adds this instance's counts to the store's and reads back the fleet's, for every site this
   * instance has counted in the current or the previous window (a site it has not served is of no
   * concern to it). Counts a failed write could not add are kept for the next flush.
   */
  async flush(now: number = this.store.now()): Promise<void> {
    const windowIndex = Math.floor(now / this.windowMs)
    for (const [siteId, counts] of this.stored) {
      if (counts.windowIndex < windowIndex - 1 && !this.unwritten.has(siteId)) this.stored.delete(siteId)
    }
    const sites = new Set([...this.unwritten.keys(), ...this.stored.keys()])
    const results = await Promise.allSettled([...sites].map((siteId) => this.flushSite(siteId, windowIndex)))
    const failure = results.find((result) => result.status === 'rejected')
    if (failure !== undefined) throw failure.reason
  }

  private async flushSite(siteId: string, windowIndex: number): Promise<void> {
    const count = this.unwritten.get(siteId) ?? 0
    this.unwritten.delete(siteId)
    try {
      const [current, previous] = await Promise.all([
        this.store.increment(surgeKey(siteId, windowIndex), this.windowMs * 2, count),
        this.store.get(surgeKey(siteId, windowIndex - 1)),
      ])
      this.stored.set(siteId, { windowIndex, current, previous: Number(previous ?? 0) || 0 })
    } catch (error) {
      if (count > 0) this.unwritten.set(siteId, (this.unwritten.get(siteId) ?? 0) + count)
      throw error
    }
  }
}

/** A site's challenge requests in one window; a site's two windows share its hash tag. */
export function surgeKey(siteId: string, windowIndex: number): string {
  return `surge:{${siteId}}:${windowIndex}`
}
