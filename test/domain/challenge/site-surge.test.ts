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

  it.skipIf(!available)('counts this instance\'s requests at once, before any flush', () => {
    const meter = new SurgeMeter(subject.keyValue)
    const siteId = randomUUID()
    const now = momentInWindow(1_000)
    expect([1, 2, 3].map(() => meter.count(siteId, now))).toEqual([1, 2, 3])
    expect(meter.rate(randomUUID(), now)).toBe(0)
  })

  it.skipIf(!available)('sees the requests of every instance once each has flushed', async () => {
    const [first, second] = [new SurgeMeter(subject.keyValue), new SurgeMeter(subject.keyValue)]
    const siteId = randomUUID()
    const now = momentInWindow(1_000)
    for (let index = 0; index < 7; index++) first.count(siteId, now)
    for (let index = 0; index < 5; index++) second.count(siteId, now)
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
    for (let index = 0; index < 100; index++) meter.count(siteId, start + 30_000)
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

  it.skipIf(!available)('keeps the counts a failed write could not add, and adds them at the next flush', async () => {
    let failing = true
    const flaky: KeyValueStore = Object.create(subject.keyValue, {
      increment: {
        value: (key: string, ttlMs: number, by?: number) => (failing ? Promise.reject(new Error('connection lost')) : subject.keyValue.increment(key, ttlMs, by)),
      },
    })
    const meter = new SurgeMeter(flaky)
    const observer = new SurgeMeter(subject.keyValue)
    const siteId = randomUUID()
    const now = momentInWindow(1_000)
    for (let index = 0; index < 4; index++) meter.count(siteId, now)
    await expect(meter.flush(now)).rejects.toThrow('connection lost')
    expect(meter.rate(siteId, now)).toBe(4)
    failing = false
    await meter.flush(now)
    // Another instance that counts the site's requests learns of them at its flush.
    observer.count(siteId, now)
    await observer.flush(now)
    expect(observer.rate(siteId, now)).toBe(5)
  })
})
