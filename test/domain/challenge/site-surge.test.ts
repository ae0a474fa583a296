import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { SURGE_MAX_BITS, SurgeMeter, surgeBits, surgeRecordKey, type SurgeAlert } from '../../../src/domain/challenge/site-surge.js'
import type { KeyValueStore } from '../../../src/storage/ports.js'
import { keyValueForSuite, keyValueKinds } from '../../helpers/storage.js'

const MINUTE = 60_000
/** A threshold the counts below never reach: no surge begins. */
const NEVER_REACHED = 1_000_000

describe('surgeBits', () => {
  it('adds nothing below the threshold, or with the threshold at 0 (off)', () => {
    expect(surgeBits(99, 100)).toBe(0)
    expect(surgeBits(1_000_000, 0)).toBe(0)
  })

  it('adds one bit at the threshold and one more per doubling, at most four', () => {
    expect([100, 199, 200, 399, 400, 800, 1_600, 100_000].map((rate) => surgeBits(rate, 100))).toEqual([1, 1, 2, 2, 3, 4, 4, 4])
    expect(SURGE_MAX_BITS).toBe(4)
  })
})

/** A moment `offsetMs` into the current window of the store's clock. */
function momentInWindowOf(store: KeyValueStore, offsetMs: number): number {
  return Math.floor(store.now() / MINUTE) * MINUTE + offsetMs
}

function countTimesAt(threshold: number) {
  return (meter: SurgeMeter, siteId: string, times: number, now: number) => {
    for (let index = 0; index < times; index++) meter.count(siteId, threshold, now)
  }
}

describe.each(keyValueKinds)('SurgeMeter on $kind', ({ kind, available }) => {
  const subject = keyValueForSuite(kind, available)
  const momentInWindow = (offsetMs: number) => momentInWindowOf(subject.keyValue, offsetMs)
  const countTimes = countTimesAt(NEVER_REACHED)
  /** A store whose every call of `method` fails while `failing.now` is true (a forced failure). */
  const failingOn = (method: 'increment' | 'getMany', failing: { now: boolean }): KeyValueStore =>
    Object.create(subject.keyValue, {
      [method]: {
        value: (...args: unknown[]) =>
          failing.now ? Promise.reject(new Error('connection lost')) : (subject.keyValue[method] as (...a: unknown[]) => Promise<unknown>).apply(subject.keyValue, args),
      },
    }) as KeyValueStore

  it.skipIf(!available)('counts this instance\'s challenges at once, before any flush', () => {
    const meter = new SurgeMeter(subject.keyValue)
    const siteId = randomUUID()
    const now = momentInWindow(1_000)
    countTimes(meter, siteId, 3, now)
    expect(meter.rate(siteId, now)).toBe(3)
    expect(meter.rate(randomUUID(), now)).toBe(0)
  })

  it.skipIf(!available)('sees the challenges of every instance once each has flushed', async () => {
    const [first, second] = [new SurgeMeter(subject.keyValue), new SurgeMeter(subject.keyValue)]
    const siteId = randomUUID()
    const now = momentInWindow(1_000)
    countTimes(first, siteId, 7, now)
    countTimes(second, siteId, 5, now)
    await first.flush(now)
    await second.flush(now)
    // The first learns of the second's at its next flush, which adds nothing of its own twice.
    await first.flush(now)
    expect(first.rate(siteId, now)).toBe(12)
    expect(second.rate(siteId, now)).toBe(12)
    // Another site's counters are its own.
    expect(first.rate(randomUUID(), now)).toBe(0)
  })

  it.skipIf(!available)('keeps the share of the previous minute that the last minute still covers', async () => {
    const meter = new SurgeMeter(subject.keyValue)
    const siteId = randomUUID()
    const start = momentInWindow(0)
    countTimes(meter, siteId, 100, start + 30_000)
    await meter.flush(start + 30_000)
    expect(meter.rate(siteId, start + 59_000)).toBe(100)
    // A quarter into the next window: three quarters of the previous window's 100, and the new one.
    const later = start + MINUTE + 15_000
    meter.count(siteId, NEVER_REACHED, later)
    expect(meter.rate(siteId, later)).toBe(76)
    await meter.flush(later)
    expect(meter.rate(siteId, later)).toBe(76)
    // Two windows on, the old counts are gone.
    expect(meter.rate(siteId, start + 3 * MINUTE)).toBe(0)
  })

  it.skipIf(!available)('adds counts made just before a window ends to that window, whenever the flush comes', async () => {
    const [meter, observer] = [new SurgeMeter(subject.keyValue), new SurgeMeter(subject.keyValue)]
    const siteId = randomUUID()
    const start = momentInWindow(0)
    countTimes(meter, siteId, 40, start + 59_900)
    await meter.flush(start + MINUTE + 100)
    observer.count(siteId, NEVER_REACHED, start + MINUTE + 30_000)
    await observer.flush(start + MINUTE + 30_000)
    // Half of the previous window's 40, and the observer's own one.
    expect(observer.rate(siteId, start + MINUTE + 30_000)).toBe(21)
  })

  it.skipIf(!available)('forgets a site two windows after its last challenge, and sends nothing for it any more', async () => {
    const meter = new SurgeMeter(subject.keyValue)
    const [quiet, busy] = [randomUUID(), randomUUID()]
    const start = momentInWindow(0)
    meter.count(quiet, NEVER_REACHED, start + 1_000)
    meter.count(busy, NEVER_REACHED, start + 1_000)
    meter.count(busy, NEVER_REACHED, start + 2 * MINUTE + 1_000)
    await meter.flush(start + MINUTE + 1_000)
    expect(meter.siteCount).toBe(2)
    await meter.flush(start + 2 * MINUTE + 1_000)
    expect(meter.siteCount).toBe(1)
    // Counts that were never sent, from a window the last minute no longer covers, are dropped.
    const stale = new SurgeMeter(subject.keyValue)
    const late = randomUUID()
    countTimes(stale, late, 9, start + 1_000)
    await stale.flush(start + 3 * MINUTE)
    expect(stale.siteCount).toBe(0)
    const reader = new SurgeMeter(subject.keyValue)
    reader.count(late, NEVER_REACHED, start + 3 * MINUTE)
    await reader.flush(start + 3 * MINUTE)
    expect(reader.rate(late, start + 3 * MINUTE)).toBe(1)
  })

  /**
   * A meter whose store fails `method` at its first flush (a forced failure), after `counted`
   * challenges, and answers again for one more challenge and flush: what the meter and another
   * instance's meter then see.
   */
  async function afterOneFailedFlush(method: 'increment' | 'getMany', counted: number) {
    const failing = { now: true }
    const meter = new SurgeMeter(failingOn(method, failing))
    const observer = new SurgeMeter(subject.keyValue)
    const siteId = randomUUID()
    const now = momentInWindow(1_000)
    countTimes(meter, siteId, counted, now)
    await expect(meter.flush(now)).rejects.toThrow('connection lost')
    failing.now = false
    meter.count(siteId, NEVER_REACHED, now)
    await meter.flush(now)
    observer.count(siteId, NEVER_REACHED, now)
    await observer.flush(now)
    return { own: meter.rate(siteId, now), others: observer.rate(siteId, now) }
  }

  it.skipIf(!available)('drops the counts of a write that failed instead of sending them twice', async () => {
    // The 4 counted before the failure are gone; the one after it and the observer's own remain.
    expect((await afterOneFailedFlush('increment', 4)).others).toBe(2)
  })

  it.skipIf(!available)('counts once what was written when only the reading back failed', async () => {
    expect(await afterOneFailedFlush('getMany', 100)).toEqual({ own: 101, others: 102 })
  })
})

describe.each(keyValueKinds)('SurgeMeter alerts on $kind', ({ kind, available }) => {
  const subject = keyValueForSuite(kind, available)
  /**
   * Long enough that the flushes a test makes right after a surge was seen all fall within it on a
   * loaded machine, short enough to wait for; the store's own clock counts it.
   */
  const QUIET_MS = 2_000
  const quietTimePasses = () => new Promise((resolve) => setTimeout(resolve, QUIET_MS + 200))
  const THRESHOLD = 5

  /** Two instances of a fleet, on one store, with every alert either tells of. */
  function fleetOfTwo() {
    const alerts: (SurgeAlert & { by: string })[] = []
    const meterNamed = (by: string) => new SurgeMeter(subject.keyValue, { quietMs: QUIET_MS, onAlert: (alert) => alerts.push({ ...alert, by }) })
    return { first: meterNamed('first'), second: meterNamed('second'), alerts }
  }

  /** A fleet of two in a surge of a new site that both know of (the second tells of it), from `start`. */
  async function surgeKnownToBoth(start: number) {
    const fleet = fleetOfTwo()
    const siteId = randomUUID()
    countTimes(fleet.first, siteId, 4, start)
    countTimes(fleet.second, siteId, 4, start)
    await fleet.first.flush(start)
    await fleet.second.flush(start)
    // The first learns of the surge at its next flush.
    await fleet.first.flush(start)
    expect(fleet.alerts.map((alert) => alert.kind)).toEqual(['started'])
    return { ...fleet, siteId }
  }
  const momentInWindow = (offsetMs: number) => momentInWindowOf(subject.keyValue, offsetMs)
  const countTimes = countTimesAt(THRESHOLD)

  it.skipIf(!available)('tells once, for the whole fleet, that a site\'s rate reached its threshold', async () => {
    const { first, second, alerts } = fleetOfTwo()
    const siteId = randomUUID()
    const now = momentInWindow(1_000)
    countTimes(first, siteId, 3, now)
    await first.flush(now)
    expect(alerts).toEqual([])
    countTimes(second, siteId, 3, now)
    await second.flush(now)
    await first.flush(now)
    await second.flush(now)
    expect(alerts).toEqual([{ kind: 'started', siteId, at: new Date(now), startedAt: new Date(now), challengesPerMinute: 6, threshold: THRESHOLD, by: 'second' }])
    // Another site's rate is its own.
    expect(first.rate(randomUUID(), now)).toBe(0)
  })

  it.skipIf(!available)('tells once that the surge ended when no instance has seen the rate at the threshold for the quiet time', async () => {
    const start = momentInWindow(1_000)
    const { first, second, alerts, siteId } = await surgeKnownToBoth(start)
    const startedAt = alerts[0]!.at

    // Three minutes on, neither has counted a challenge since: the rate is 0, but the surge was seen a moment ago.
    const later = start + 3 * MINUTE
    await first.flush(later)
    await second.flush(later)
    expect(alerts).toHaveLength(1)
    // A meter follows a site in a surge although it counts nothing for it any more.
    expect([first.siteCount, second.siteCount]).toEqual([1, 1])

    await quietTimePasses()
    await Promise.all([first.flush(later), second.flush(later)])
    expect(alerts).toHaveLength(2)
    expect(alerts[1]).toMatchObject({ kind: 'ended', siteId, at: new Date(later), startedAt, challengesPerMinute: 0, threshold: THRESHOLD })
    // Then both forget it.
    await Promise.all([first.flush(later), second.flush(later)])
    expect([first.siteCount, second.siteCount]).toEqual([0, 0])
    expect(alerts).toHaveLength(2)
  })

  it.skipIf(!available)('counts a lull shorter than the quiet time, and the flood after it, as one surge', async () => {
    const { first, alerts } = fleetOfTwo()
    const siteId = randomUUID()
    const start = momentInWindow(1_000)
    countTimes(first, siteId, THRESHOLD, start)
    await first.flush(start)
    // Two windows on the rate is 0 (a lull) ...
    const lull = start + 2 * MINUTE
    await first.flush(lull)
    // ... and then the flood is back.
    countTimes(first, siteId, 2 * THRESHOLD, lull + 1_000)
    await first.flush(lull + 1_000)
    await quietTimePasses()
    await first.flush(lull + 2_000)
    expect(alerts.map((alert) => alert.kind)).toEqual(['started'])
  })

  it.skipIf(!available)('a surge begins again after one has ended', async () => {
    const { first, alerts } = fleetOfTwo()
    const siteId = randomUUID()
    const start = momentInWindow(1_000)
    countTimes(first, siteId, THRESHOLD, start)
    await first.flush(start)
    await quietTimePasses()
    await first.flush(start + 2 * MINUTE)
    countTimes(first, siteId, THRESHOLD, start + 3 * MINUTE)
    await first.flush(start + 3 * MINUTE)
    expect(alerts.map((alert) => [alert.kind, alert.startedAt.getTime()])).toEqual([
      ['started', start],
      ['ended', start],
      ['started', start + 3 * MINUTE],
    ])
  })

  it.skipIf(!available)('tells once when two instances find the threshold reached at the same moment', async () => {
    const { first, second, alerts } = fleetOfTwo()
    const siteId = randomUUID()
    const now = momentInWindow(1_000)
    countTimes(first, siteId, THRESHOLD, now)
    countTimes(second, siteId, THRESHOLD, now)
    await Promise.all([first.flush(now), second.flush(now)])
    await Promise.all([first.flush(now), second.flush(now)])
    expect(alerts.map((alert) => alert.kind)).toEqual(['started'])
  })

  it.skipIf(!available)('keeps one surge going for as long as the flood lasts, beyond the life of its record', { timeout: 30_000 }, async () => {
    const { first, alerts } = fleetOfTwo()
    const siteId = randomUUID()
    const now = momentInWindow(1_000)
    // The record lives twice the quiet time from the last flush that saw the flood: 4 s here.
    for (let round = 0; round < 4; round += 1) {
      countTimes(first, siteId, THRESHOLD, now)
      await first.flush(now)
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS))
    }
    expect(alerts.map((alert) => alert.kind)).toEqual(['started'])
  })

  it.skipIf(!available).each(['not a record', '', '{"startedAt":1e300}'])('replaces a surge record it cannot read (%j), and tells of the surge', async (damaged) => {
    const { first, alerts } = fleetOfTwo()
    const siteId = randomUUID()
    const now = momentInWindow(1_000)
    await subject.keyValue.set(surgeRecordKey(siteId), damaged, MINUTE)
    countTimes(first, siteId, THRESHOLD, now)
    await first.flush(now)
    await first.flush(now)
    expect(alerts.map((alert) => alert.kind)).toEqual(['started'])
    expect(JSON.parse((await subject.keyValue.get(surgeRecordKey(siteId))) ?? '{}')).toEqual({ startedAt: now })
  })

  it.skipIf(!available)('ends a surge whose threshold was raised above the rate, however an instance that stopped counting the site remembers it', async () => {
    const start = momentInWindow(1_000)
    const { first, second, alerts, siteId } = await surgeKnownToBoth(start)
    // Two windows on, the site's threshold is 100 and only the first issues its challenges: 8 a minute.
    const later = start + 2 * MINUTE
    for (let index = 0; index < 8; index++) first.count(siteId, 100, later)
    await first.flush(later)
    // The second still holds the old threshold of 5, under which 8 is a surge; it does not keep it going.
    await second.flush(later)
    await quietTimePasses()
    await second.flush(later)
    await first.flush(later)
    expect(alerts.map((alert) => [alert.kind, alert.by, alert.threshold])).toEqual([
      ['started', 'second', THRESHOLD],
      ['ended', 'first', 100],
    ])
  })
})
