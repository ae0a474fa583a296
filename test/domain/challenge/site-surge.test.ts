import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { SURGE_MAX_BITS, SurgeMeter, surgeBits } from '../../../src/domain/challenge/site-surge.js'
import type { KeyValueStore } from '../../../src/storage/ports.js'
import { keyValueForSuite, keyValueKinds } from '../../helpers/storage.js'

const MINUTE = 60_000

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

describe.each(keyValueKinds)('SurgeMeter on $kind', ({ kind, available }) => {
  const subject = keyValueForSuite(kind, available)

  /** A moment `offsetMs` into the current window of the store's clock. */
  const momentInWindow = (offsetMs: number) => Math.floor(subject.keyValue.now() / MINUTE) * MINUTE + offsetMs
  const countTimes = (meter: SurgeMeter, siteId: string, times: number, now: number) => {
    for (let index = 0; index < times; index++) meter.count(siteId, now)
  }
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
    meter.count(siteId, later)
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
    observer.count(siteId, start + MINUTE + 30_000)
    await observer.flush(start + MINUTE + 30_000)
    // Half of the previous window's 40, and the observer's own one.
    expect(observer.rate(siteId, start + MINUTE + 30_000)).toBe(21)
  })

  it.skipIf(!available)('forgets a site two windows after its last challenge, and sends nothing for it any more', async () => {
    const meter = new SurgeMeter(subject.keyValue)
    const [quiet, busy] = [randomUUID(), randomUUID()]
    const start = momentInWindow(0)
    meter.count(quiet, start + 1_000)
    meter.count(busy, start + 1_000)
    meter.count(busy, start + 2 * MINUTE + 1_000)
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
    reader.count(late, start + 3 * MINUTE)
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
    meter.count(siteId, now)
    await meter.flush(now)
    observer.count(siteId, now)
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
