import type { KeyValueStore } from '../../storage/ports.js'
import { previousWindowShare } from '../sliding-window.js'
import { countOf } from '../stored-count.js'

/**
 * Surge protection: while a site issues more challenges per minute, across all instances, than
 * its `surgeChallengesPerMinute`, every challenge of the site is harder: one bit at the threshold
 * and one more per doubling of it, at most SURGE_MAX_BITS. A client's own history (its rate, its
 * blocks) cannot see a botnet that sends each address's requests slowly; the site's total can. A
 * surge says nothing about any one visitor, so it raises the work only, never a score.
 */
export const SURGE_MAX_BITS = 4

/** The bits a site's rate adds to its challenges; 0 below the threshold or when it is 0 (off). */
export function surgeBits(challengesPerMinute: number, threshold: number): number {
  if (threshold <= 0 || challengesPerMinute < threshold) return 0
  return Math.min(SURGE_MAX_BITS, 1 + Math.floor(Math.log2(challengesPerMinute / threshold)))
}

/** A surge's beginning or end, for the whole fleet: each is reported by one instance only. */
export interface SurgeAlert {
  kind: 'started' | 'ended'
  siteId: string
  /** When the rate crossed the threshold (started), or when the surge was found over (ended). */
  at: Date
  /** When the surge began (for `started`, the same as `at`). */
  startedAt: Date
  /** The site's challenges over the last minute as this instance read them at that moment. */
  challengesPerMinute: number
  threshold: number
}

export interface SurgeMeterOptions {
  /** The length of a counting window (a minute; tests may shorten it). */
  windowMs?: number
  /**
   * How long the rate must stay below the threshold, seen by no instance above it, before a
   * surge is over (SURGE_QUIET_MS): a flood that pauses for a minute is one surge, not two.
   */
  quietMs?: number
  /** Told of every surge that begins or ends (a listener must not throw). */
  onAlert?: (alert: SurgeAlert) => void
}

/** A surge is over once no instance has seen the rate at or above the threshold for this long. */
export const SURGE_QUIET_MS = 3 * 60_000

/** What this instance knows of one site's counts. */
interface SiteCounts {
  /** The site's threshold, as its last challenge here read it. */
  threshold: number
  /** The record of the site's surge as the last read found it (surgeRecordKey); undefined when there was none. */
  surgeRecord: string | undefined
  /** Whether the last read found the site's rate seen at or over its threshold within quietMs. */
  isSurgeSeen: boolean
  /** The window of this instance's last count of the site. */
  lastCountedWindow: number
  /** This instance's counts not yet sent to the store, by window. */
  unwritten: Map<number, number>
  /** Counts sent to the store whose total has not been read back yet, by window. */
  sending: Map<number, number>
  /** The fleet's counts as the store last answered: the window they were read in and the one before. */
  read: { windowIndex: number; current: number; previous: number } | undefined
}

/**
 * Counts the challenges issued for sites with surge protection on, for the whole fleet: each
 * instance counts in memory and, every second or so (flush), adds its counts to the store's
 * per-minute counters and reads the fleet's totals back, so the request path touches no store. The
 * rate is a sliding minute: the current window's count plus the share of the previous window's
 * that the last minute still covers. An instance sees the others' challenges a flush late.
 *
 * Counts a write could not add are dropped, not tried again: a write that timed out may have
 * landed, and counting it twice would make people pay for a surge that was not there, while a
 * count lost in an outage (when few challenges are issued anyway) only delays a surge's bits.
 */
export class SurgeMeter {
  private readonly sites = new Map<string, SiteCounts>()
  private readonly windowMs: number
  private readonly quietMs: number
  private readonly onAlert: (alert: SurgeAlert) => void

  constructor(
    private readonly store: KeyValueStore,
    options: SurgeMeterOptions = {},
  ) {
    this.windowMs = options.windowMs ?? 60_000
    this.quietMs = options.quietMs ?? SURGE_QUIET_MS
    this.onAlert = options.onAlert ?? (() => {})
  }

  /** Counts one challenge issued for the site, whose threshold is `threshold`. */
  count(siteId: string, threshold: number, now: number = this.store.now()): void {
    const windowIndex = this.windowOf(now)
    let counts = this.sites.get(siteId)
    if (counts === undefined) {
      counts = { threshold, surgeRecord: undefined, isSurgeSeen: false, lastCountedWindow: windowIndex, unwritten: new Map(), sending: new Map(), read: undefined }
      this.sites.set(siteId, counts)
    }
    counts.threshold = threshold
    counts.lastCountedWindow = windowIndex
    counts.unwritten.set(windowIndex, (counts.unwritten.get(windowIndex) ?? 0) + 1)
  }

  /** The site's challenges over the last window: the fleet's as last read, and this instance's since. */
  rate(siteId: string, now: number = this.store.now()): number {
    const counts = this.sites.get(siteId)
    if (counts === undefined) return 0
    const windowIndex = this.windowOf(now)
    const { read } = counts
    let current = ownCount(counts, windowIndex)
    let previous = ownCount(counts, windowIndex - 1)
    if (read?.windowIndex === windowIndex) {
      current += read.current
      previous += read.previous
    } else if (read?.windowIndex === windowIndex - 1) {
      previous += read.current
    }
    return this.slidingCount(current, previous, now)
  }

  /** A sliding window's count: the current window's, and the share of the previous one the last window still covers. */
  private slidingCount(current: number, previous: number, now: number): number {
    return current + Math.floor(previous * previousWindowShare(now, this.windowMs))
  }

  /**
   * The site's surge as the store holds it now, for its operator: the fleet's challenges over the
   * last window (with this instance's not yet sent) and, in a surge, when it began. Counted only
   * while the site's surge protection is on.
   */
  async status(siteId: string, now: number = this.store.now()): Promise<{ challengesPerMinute: number; startedAt: Date | undefined }> {
    const windowIndex = this.windowOf(now)
    // Taken before the read: counts a flush moves on are sent before it on the store's one
    // connection (so the read has them), and counts made after it are not in it.
    const unsent = this.sites.get(siteId)?.unwritten
    const [unsentCurrent, unsentPrevious] = [unsent?.get(windowIndex) ?? 0, unsent?.get(windowIndex - 1) ?? 0]
    const [current, previous, record] = await this.store.getMany([surgeKey(siteId, windowIndex), surgeKey(siteId, windowIndex - 1), surgeRecordKey(siteId)])
    const startedAt = record === null || record === undefined ? undefined : startOfSurge(record)
    return {
      challengesPerMinute: this.slidingCount(countOf(current) + unsentCurrent, countOf(previous) + unsentPrevious, now),
      startedAt: startedAt === undefined ? undefined : new Date(startedAt),
    }
  }

  /** How many sites this instance keeps counts of: those it counted in the current or the previous window. */
  get siteCount(): number {
    return this.sites.size
  }

  /**
   * Adds this instance's counts to the store's and reads back the fleet's, for every site this
   * instance counted in the current or the previous window or that was in a surge at the last
   * read; forgets the others. Then tells of surges that began or ended (onAlert). Throws the
   * first failure once every site has been tried.
   */
  async flush(now: number = this.store.now()): Promise<void> {
    const windowIndex = this.windowOf(now)
    const flushes: Promise<void>[] = []
    for (const [siteId, counts] of this.sites) {
      for (const window of counts.unwritten.keys()) if (window < windowIndex - 1) counts.unwritten.delete(window)
      // A site in a surge is followed until the surge ends, challenges or not.
      if (counts.lastCountedWindow < windowIndex - 1 && counts.sending.size === 0 && counts.surgeRecord === undefined) {
        this.sites.delete(siteId)
        continue
      }
      flushes.push(this.flushSite(siteId, counts, windowIndex).then(() => this.followSurge(siteId, counts, now)))
    }
    const failure = (await Promise.allSettled(flushes)).find((result) => result.status === 'rejected')
    if (failure !== undefined) throw failure.reason
  }

  private async flushSite(siteId: string, counts: SiteCounts, windowIndex: number): Promise<void> {
    const batch = [...counts.unwritten]
    counts.unwritten.clear()
    for (const [window, count] of batch) counts.sending.set(window, (counts.sending.get(window) ?? 0) + count)
    try {
      await Promise.all(batch.map(([window, count]) => this.store.increment(surgeKey(siteId, window), this.windowMs * 2, count)))
    } catch (error) {
      takeAway(counts.sending, batch)
      throw error
    }
    try {
      // The keys share the site's hash tag: one command, on Redis Cluster too.
      const [current, previous, record, seen] = await this.store.getMany([
        surgeKey(siteId, windowIndex),
        surgeKey(siteId, windowIndex - 1),
        surgeRecordKey(siteId),
        surgeSeenKey(siteId),
      ])
      counts.read = { windowIndex, current: countOf(current), previous: countOf(previous) }
      counts.surgeRecord = record ?? undefined
      counts.isSurgeSeen = seen !== null && seen !== undefined
    } finally {
      // Written either way: the fleet's totals have them now, read back now or at the next flush.
      takeAway(counts.sending, batch)
    }
  }

  /**
   * A surge begins, for the whole fleet, when an instance that counts the site and reads its rate
   * at or above the threshold is the first to write the site's surge record; every such instance
   * marks the site as seen above it (a mark that lasts quietMs) and keeps the record alive. It
   * ends when an instance that reads the rate below the threshold, the record there and the mark
   * gone, takes that very record. So each is told once, by one instance, however many count the
   * site. Only instances that count the site's challenges keep a surge going: one that merely
   * follows it may hold a threshold the site has changed since.
   */
  private async followSurge(siteId: string, counts: SiteCounts, now: number): Promise<void> {
    const rate = this.rate(siteId, now)
    const { threshold, surgeRecord } = counts
    const recordKey = surgeRecordKey(siteId)
    const startedAt = surgeRecord === undefined ? undefined : startOfSurge(surgeRecord)
    if (surgeRecord !== undefined && startedAt === undefined) {
      // Not a record this code wrote (damaged): cleared, so that surges are told again. That very
      // value only, unless it is empty (every value ends with that).
      if (surgeRecord === '') await this.store.delete(recordKey)
      else await this.store.takeIfEndsWith(recordKey, surgeRecord)
      counts.surgeRecord = undefined
    }
    if (surgeBits(rate, threshold) > 0) {
      if (counts.lastCountedWindow < this.windowOf(now) - 1) return
      await this.store.set(surgeSeenKey(siteId), '1', this.quietMs)
      // Kept a quiet time longer than the mark, for the instance that finds the surge over.
      const recordTtlMs = 2 * this.quietMs
      if (startedAt !== undefined && (await this.store.expire(recordKey, recordTtlMs))) return
      // The store's clock may run a fraction of a millisecond off ours (Redis's).
      const startsAt = Math.floor(now)
      const record = JSON.stringify({ startedAt: startsAt })
      if (!(await this.store.setIfAbsent(recordKey, record, recordTtlMs))) return
      counts.surgeRecord = record
      this.onAlert({ kind: 'started', siteId, at: new Date(startsAt), startedAt: new Date(startsAt), challengesPerMinute: rate, threshold })
      return
    }
    if (startedAt === undefined || counts.isSurgeSeen) return
    // That very record: a surge that began since (another start) is left to end in its turn.
    const taken = await this.store.takeIfEndsWith(recordKey, surgeRecord!)
    counts.surgeRecord = undefined
    if (taken === null) return
    this.onAlert({ kind: 'ended', siteId, at: new Date(now), startedAt: new Date(startedAt), challengesPerMinute: rate, threshold })
  }

  private windowOf(now: number): number {
    return Math.floor(now / this.windowMs)
  }
}

/** This instance's counts of one window that the last read of the store does not hold. */
function ownCount(counts: SiteCounts, windowIndex: number): number {
  return (counts.unwritten.get(windowIndex) ?? 0) + (counts.sending.get(windowIndex) ?? 0)
}

function takeAway(from: Map<number, number>, batch: readonly (readonly [number, number])[]): void {
  for (const [window, count] of batch) {
    const left = (from.get(window) ?? 0) - count
    if (left > 0) from.set(window, left)
    else from.delete(window)
  }
}

/** When the surge a record tells of began (ms), or undefined: no record, or not one of ours. */
function startOfSurge(record: string): number | undefined {
  try {
    const startedAt: unknown = (JSON.parse(record) as { startedAt?: unknown }).startedAt
    // A time a Date can hold (a record that says 1e300 is as damaged as one that says nothing).
    return typeof startedAt === 'number' && Number.isSafeInteger(startedAt) && startedAt >= 0 && startedAt <= MAX_DATE_MS ? startedAt : undefined
  } catch {
    return undefined
  }
}

/** The latest time a Date holds. */
const MAX_DATE_MS = 8.64e15

/**
 * The record of a site's surge going on: `{"startedAt": ms}`, written by the instance that saw it
 * begin. Its format's version is in the key: a later format gets a key of its own, so that two
 * versions of the service running side by side never take each other's records for damaged ones.
 */
export function surgeRecordKey(siteId: string): string {
  return `surge-on:v1:{${siteId}}`
}

/** Present while some instance saw the site's rate at or above its threshold in the last quietMs. */
function surgeSeenKey(siteId: string): string {
  return `surge-seen:{${siteId}}`
}

/** A site's challenges in one window; a site's windows share its hash tag. */
export function surgeKey(siteId: string, windowIndex: number): string {
  return `surge:{${siteId}}:${windowIndex}`
}
