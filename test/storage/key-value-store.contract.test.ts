import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { defaultHistoryPolicy, recordAndAssessHistory, recordChallengeRequest, recordOutcome } from '../../src/domain/history/client-history.js'
import { consumeRateLimit } from '../../src/domain/rate-limit.js'
import type { KeyValueStore } from '../../src/storage/ports.js'
import { openRedisStore } from '../../src/storage/redis/redis-store.js'
import { redisUrl } from '../helpers/services.js'
import { keyValueForSuite, keyValueKinds, openTestKeyValue, type TestKeyValue } from '../helpers/storage.js'

/** One contract for every KeyValueStore implementation: memory and real Redis alike. */
describe.each(keyValueKinds)('KeyValueStore contract on $kind', ({ kind, available }) => {
  const subject = keyValueForSuite(kind, available)

  it.skipIf(!available)('sets and gets a value; a missing key is null', async () => {
    await subject.keyValue.set('greeting', 'hello', 10_000)
    expect(await subject.keyValue.get('greeting')).toBe('hello')
    expect(await subject.keyValue.get('absent')).toBeNull()
  })

  it.skipIf(!available)('expires a value after its time to live', async () => {
    await subject.keyValue.set('short-lived', 'x', 50)
    const ttl = await subject.keyValue.timeToLive('short-lived')
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(50)
    await sleep(120)
    expect(await subject.keyValue.get('short-lived')).toBeNull()
    expect(await subject.keyValue.timeToLive('short-lived')).toBeNull()
  })

  it.skipIf(!available)('expire gives a key that exists a new time to live, and creates none', async () => {
    await subject.keyValue.set('extended', 'kept', 1_000)
    expect(await subject.keyValue.expire('extended', 60_000)).toBe(true)
    expect(await subject.keyValue.get('extended')).toBe('kept')
    expect(await subject.keyValue.timeToLive('extended')).toBeGreaterThan(30_000)
    expect(await subject.keyValue.expire('extended', 50)).toBe(true)
    await sleep(200)
    expect(await subject.keyValue.get('extended')).toBeNull()
    expect(await subject.keyValue.expire('never-set', 10_000)).toBe(false)
    expect(await subject.keyValue.get('never-set')).toBeNull()
  })

  it.skipIf(!available)('remembers since its opening at the latest, and keeps that time and its data epoch while it keeps its data', async () => {
    const since = subject.keyValue.remembersSince()
    const epoch = subject.keyValue.dataEpoch()
    expect(since).toBeLessThanOrEqual(Date.now())
    expect(since).toBeGreaterThan(Date.now() - 10 * 60_000)
    // Known once the store is open (verify stamps tokens with it without asking the store).
    expect(epoch).toEqual(expect.any(Number))
    await subject.keyValue.set('remembered', 'x', 10_000)
    expect(subject.keyValue.remembersSince()).toBe(since)
    expect(subject.keyValue.dataEpoch()).toBe(epoch)
  })

  it.skipIf(!available)('setIfAbsent sets only once', async () => {
    expect(await subject.keyValue.setIfAbsent('once', 'first', 10_000)).toBe(true)
    expect(await subject.keyValue.setIfAbsent('once', 'second', 10_000)).toBe(false)
    expect(await subject.keyValue.get('once')).toBe('first')
  })

  it.skipIf(!available)('take returns the value to exactly one of many concurrent callers', async () => {
    await subject.keyValue.set('prize', 'won', 10_000)
    const results = await Promise.all(Array.from({ length: 50 }, () => subject.keyValue.take('prize')))
    expect(results.filter((result) => result?.value === 'won')).toHaveLength(1)
    expect(results.filter((result) => result === null)).toHaveLength(49)
    expect(await subject.keyValue.get('prize')).toBeNull()
  })

  it.skipIf(!available)('answers each of many commands sent in one turn with its own answer, in the order they were sent', async () => {
    // On Redis the commands of a turn leave together in one write (writesTogetherPerTurn).
    const keys = Array.from({ length: 100 }, (_, index) => `turn:${index}`)
    const answers = keys.map((key, index) => Promise.all([
      subject.keyValue.set(key, `value ${index}`, 10_000),
      subject.keyValue.get(key),
      subject.keyValue.increment('turn:count', 10_000),
      subject.keyValue.take(key),
      subject.keyValue.get(key),
    ]))
    const settled = await Promise.all(answers)
    expect(settled.map(([, read]) => read)).toEqual(keys.map((_, index) => `value ${index}`))
    expect(settled.map(([, , count]) => count)).toEqual(keys.map((_, index) => index + 1))
    expect(settled.map(([, , , taken]) => taken?.value)).toEqual(keys.map((_, index) => `value ${index}`))
    expect(settled.map(([, , , , afterTake]) => afterTake)).toEqual(keys.map(() => null))
  })

  it.skipIf(!available)('take answers the time the key had left to live, by the store\'s clock', async () => {
    await subject.keyValue.set('aging', 'x', 10_000)
    await sleep(300)
    const taken = await subject.keyValue.take('aging')
    expect(taken?.value).toBe('x')
    // 10 s less the 300 ms waited, less what the calls took (a timer may fire a millisecond early).
    expect(taken?.timeToLiveMs).toBeGreaterThan(9_000)
    expect(taken?.timeToLiveMs).toBeLessThanOrEqual(9_750)
    expect(await subject.keyValue.take('aging')).toBeNull()
  })

  it.skipIf(!available)('take of an expired key returns null', async () => {
    await subject.keyValue.set('stale', 'x', 30)
    await sleep(80)
    expect(await subject.keyValue.take('stale')).toBeNull()
  })

  it.skipIf(!available)('takeIfEndsWith takes a matching value once and leaves any other value in place', async () => {
    await subject.keyValue.set('round', '2.abc', 10_000)
    expect(await subject.keyValue.takeIfEndsWith('round', '.xyz')).toBeNull()
    expect(await subject.keyValue.takeIfEndsWith('round', 'longer than the value 2.abc')).toBeNull()
    expect(await subject.keyValue.get('round')).toBe('2.abc')
    const results = await Promise.all(Array.from({ length: 20 }, () => subject.keyValue.takeIfEndsWith('round', '.abc')))
    expect(results.filter((result) => result === '2.abc')).toHaveLength(1)
    expect(await subject.keyValue.get('round')).toBeNull()
    expect(await subject.keyValue.takeIfEndsWith('absent', '.abc')).toBeNull()
  })

  it.skipIf(!available)('increment counts atomically under concurrency', async () => {
    const values = await Promise.all(Array.from({ length: 100 }, () => subject.keyValue.increment('hits', 10_000)))
    expect(new Set(values).size).toBe(100)
    expect(Math.max(...values)).toBe(100)
    expect(await subject.keyValue.increment('hits', 10_000, 5)).toBe(105)
  })

  it.skipIf(!available)('increment gives a new counter its expiry and keeps it on later increments', async () => {
    // No sleep between the two increments: one that overslept the counter's life on a busy host
    // made a new counter of the second, and the test failed without a fault in the store.
    await subject.keyValue.increment('window', 500)
    await subject.keyValue.increment('window', 10_000)
    const ttl = await subject.keyValue.timeToLive('window')
    expect(ttl).not.toBeNull()
    // The first increment's 500 ms, not the later one's 10 s.
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(500)
    await sleep(600)
    expect(await subject.keyValue.get('window')).toBeNull()
    expect(await subject.keyValue.increment('window', 10_000)).toBe(1)
  })

  it.skipIf(!available)('getMany returns the values in the order asked, null where absent or expired', async () => {
    await subject.keyValue.set('many:a', 'first', 10_000)
    await subject.keyValue.set('many:c', 'third', 10_000)
    await subject.keyValue.set('many:gone', 'x', 20)
    await sleep(60)
    expect(await subject.keyValue.getMany(['many:c', 'many:b', 'many:a', 'many:gone'])).toEqual(['third', null, 'first', null])
    expect(await subject.keyValue.getMany([])).toEqual([])
  })

  it.skipIf(!available)('incrementAndRead counts atomically under concurrency and reads the other keys in the same step', async () => {
    await subject.keyValue.set('{c}:state', 'kept', 10_000)
    const results = await Promise.all(Array.from({ length: 50 }, () => subject.keyValue.incrementAndRead('{c}:count', 10_000, ['{c}:state', '{c}:absent'])))
    expect(results.map((result) => result.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, index) => index + 1))
    expect(results.every((result) => result.values[0] === 'kept' && result.values[1] === null && result.values.length === 2)).toBe(true)
    expect(await subject.keyValue.incrementAndRead('{c}:count', 10_000, [])).toEqual({ count: 51, values: [] })
  })

  it.skipIf(!available)('incrementAndRead gives a new counter its expiry and keeps it on later increments', async () => {
    await subject.keyValue.incrementAndRead('{w}:count', 500, ['{w}:other'])
    await subject.keyValue.incrementAndRead('{w}:count', 10_000, [])
    // The first increment's 500 ms, not the later one's 10 s (as for increment above).
    const ttl = await subject.keyValue.timeToLive('{w}:count')
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(500)
    await sleep(600)
    expect((await subject.keyValue.incrementAndRead('{w}:count', 10_000, [])).count).toBe(1)
  })

  it.skipIf(!available)('countDistinct counts each marker once, under concurrency too', async () => {
    const counts = await Promise.all(['a', 'b', 'a', 'c', 'b', 'a'].map((member) => subject.keyValue.countDistinct(`seen:${member}`, 'seen', 10_000)))
    expect(Math.max(...counts)).toBe(3)
    expect(await subject.keyValue.countDistinct('seen:a', 'seen', 10_000)).toBe(3)
    expect(await subject.keyValue.countDistinct('seen:d', 'seen', 10_000)).toBe(4)
    expect(await subject.keyValue.get('seen')).toBe('4')
  })

  it.skipIf(!available)('countDistinct forgets markers and the counter after their time to live', async () => {
    expect(await subject.keyValue.countDistinct('brief:a', 'brief', 50)).toBe(1)
    expect(await subject.keyValue.timeToLive('brief')).toBeLessThanOrEqual(50)
    await sleep(100)
    expect(await subject.keyValue.get('brief')).toBeNull()
    expect(await subject.keyValue.countDistinct('brief:a', 'brief', 10_000)).toBe(1)
  })

  it.skipIf(!available)('countDistinct starts a new window whole: a member marked late in a window is counted again in the next', async () => {
    expect(await subject.keyValue.countDistinct('tumbling:a', 'tumbling', 200)).toBe(1)
    await sleep(120)
    expect(await subject.keyValue.countDistinct('tumbling:b', 'tumbling', 200)).toBe(2)
    // b's marker went with the counter: both members count in the new window.
    await sleep(130)
    expect(await subject.keyValue.countDistinct('tumbling:a', 'tumbling', 200)).toBe(1)
    expect(await subject.keyValue.countDistinct('tumbling:b', 'tumbling', 200)).toBe(2)
  })

  it.skipIf(!available)('delete removes a key', async () => {
    await subject.keyValue.set('doomed', 'x', 10_000)
    await subject.keyValue.delete('doomed')
    expect(await subject.keyValue.get('doomed')).toBeNull()
  })

  it.skipIf(!available)('publishes to subscribers until they unsubscribe', async () => {
    const received: string[] = []
    const unsubscribe = await subject.keyValue.subscribe('news', (message) => received.push(message))
    await subject.keyValue.publish('news', 'first')
    await expect.poll(() => received).toEqual(['first'])
    await unsubscribe()
    await subject.keyValue.publish('news', 'second')
    await sleep(50)
    expect(received).toEqual(['first'])
  })

  it.skipIf(!available)('answers a ping', async () => {
    await expect(subject.keyValue.ping()).resolves.toBeUndefined()
  })
})

describe.skipIf(!keyValueKinds[1]?.available)('Redis as the clock of windows', () => {
  /** How far the second instance's clock runs ahead: a whole block window, fifteen rate windows. */
  const skewMs = defaultHistoryPolicy.blockWindowMs
  const realNow = Date.now.bind(Date)
  /** Runs `work` as an instance whose clock is `skewMs` ahead would. */
  const ahead = async <T>(work: () => Promise<T>): Promise<T> => {
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + skewMs)
    try {
      return await work()
    } finally {
      clock.mockRestore()
    }
  }
  // Two instances on one Redis: by their own clocks they would always count a client in
  // different windows, each up to the limit.
  let onTime: TestKeyValue
  let early: KeyValueStore
  beforeEach(async () => {
    onTime = await openTestKeyValue('redis')
    early = await ahead(() => openRedisStore({ url: redisUrl, keyPrefix: onTime.prefix }))
    expect(Math.abs((await ahead(async () => early.now())) - onTime.keyValue.now())).toBeLessThan(1_000)
  })
  afterEach(async () => {
    await Promise.all([onTime.keyValue.close(), early.close()])
    await onTime.dispose()
  })

  it('gives instances whose clocks differ one rate-limit window, and one budget, for a client', async () => {
    const rule = { limit: 10, windowMs: 60_000 }
    const verdicts = []
    for (let index = 0; index < 20; index++) {
      verdicts.push(await (index % 2 === 0 ? consumeRateLimit(onTime.keyValue, 'client', rule) : ahead(() => consumeRateLimit(early, 'client', rule))))
    }
    expect(verdicts.filter((verdict) => verdict.isAllowed)).toHaveLength(10)
    // Retry-After by the same clock: within the window on both instances.
    for (const verdict of verdicts.slice(-2)) expect(verdict.retryAfterSeconds).toBeLessThanOrEqual(60)
  })

  it('gives instances whose clocks differ one history of a client: its request rate and its recent blocks', async () => {
    const policy = { ...defaultHistoryPolicy, rateLimit: 5, blockLimit: 2 }
    const client = { siteId: 'site-a', client: 'c1' }
    const requests = []
    for (let index = 0; index < 6; index++) {
      requests.push(await (index % 2 === 0 ? recordChallengeRequest(onTime.keyValue, client, undefined, policy) : ahead(() => recordChallengeRequest(early, client, undefined, policy))))
    }
    // The sixth request of the minute is over the rate, whichever instance counted the others.
    expect(requests.map((request) => request.anomalies.includes('high_request_rate'))).toEqual([false, false, false, false, false, true])

    // One block seen by each instance: two blocks of the client's recent ones, on both.
    await ahead(() => recordOutcome(early, client, 'block', policy))
    await recordOutcome(onTime.keyValue, client, 'block', policy)
    const other = { siteId: 'site-a', client: 'c2' }
    expect((await recordChallengeRequest(onTime.keyValue, client, undefined, policy)).anomalies).toContain('recent_blocks')
    expect((await ahead(() => recordAndAssessHistory(early, { ...client, fingerprint: undefined }, undefined, policy))).anomalies).toContain('recent_blocks')
    expect((await recordChallengeRequest(onTime.keyValue, other, undefined, policy)).anomalies).toEqual([])
  })
})

describe.skipIf(!keyValueKinds[1]?.available)('Redis key prefixes', () => {
  it('isolate two stores sharing one Redis, pub/sub included', async () => {
    const [first, second] = await Promise.all([openTestKeyValue('redis'), openTestKeyValue('redis')])
    try {
      await first.keyValue.set('shared-name', 'first', 10_000)
      expect(await second.keyValue.get('shared-name')).toBeNull()
      const received: string[] = []
      await second.keyValue.subscribe('channel', (message) => received.push(message))
      await first.keyValue.publish('channel', 'not for you')
      await sleep(50)
      expect(received).toEqual([])
    } finally {
      await Promise.all([first.keyValue.close(), second.keyValue.close()])
      await Promise.all([first.dispose(), second.dispose()])
    }
  })
})
