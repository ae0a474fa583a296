import { afterEach, describe, expect, it } from 'vitest'
import { openMemoryStore, type MemoryStore } from '../../src/storage/memory/memory-store.js'

// What the shared contract (key-value-store.contract.test.ts) cannot see: how the embedded store
// keeps its entries (slots reused after deletes and expiries) and that its sweep bounds memory.
describe('the embedded key-value store', () => {
  let store: MemoryStore | undefined
  afterEach(async () => {
    await store?.close()
    store = undefined
  })

  it('drops expired keys that are never read again, over a few sweeps, and keeps the live ones', async () => {
    let time = 1_000_000
    store = openMemoryStore({ now: () => time, sweepIntervalMs: 5, sweepsPerPass: 4 })
    for (let index = 0; index < 10_000; index++) await store.set(`brief:${index}`, 'x', 1_000)
    for (let index = 0; index < 100; index++) await store.set(`lasting:${index}`, `value ${index}`, 60_000)
    expect(store.size()).toBe(10_100)

    time += 1_000
    await expect.poll(() => store?.size(), { timeout: 2_000 }).toBe(100)
    for (let index = 0; index < 100; index++) expect(await store.get(`lasting:${index}`)).toBe(`value ${index}`)
  })

  it('gives freed slots to new keys without mixing up values or expiries', async () => {
    let time = 0
    store = openMemoryStore({ now: () => time })
    await store.set('first', 'one', 100)
    await store.set('second', 'two', 10_000)
    await store.delete('first')
    expect(await store.take('second')).toEqual({ value: 'two', timeToLiveMs: 10_000 })
    // Both slots are free now; the new keys take them in some order.
    await store.set('third', 'three', 50)
    expect(await store.increment('fourth', 5_000, 7)).toBe(7)

    expect(await store.getMany(['first', 'second', 'third', 'fourth'])).toEqual([null, null, 'three', '7'])
    expect(await store.timeToLive('third')).toBe(50)
    expect(await store.timeToLive('fourth')).toBe(5_000)
    time += 60
    expect(await store.get('third')).toBeNull()
    expect(await store.get('fourth')).toBe('7')
    expect(store.size()).toBe(1)
  })

  it('grows past its first block of slots and keeps every entry', async () => {
    store = openMemoryStore()
    for (let index = 0; index < 5_000; index++) await store.set(`key:${index}`, String(index), 60_000)
    const values = await store.getMany(Array.from({ length: 5_000 }, (_, index) => `key:${index}`))
    expect(values).toEqual(Array.from({ length: 5_000 }, (_, index) => String(index)))
    for (let index = 0; index < 5_000; index += 2) await store.delete(`key:${index}`)
    expect(store.size()).toBe(2_500)
    expect(await store.get('key:4999')).toBe('4999')
    expect(await store.get('key:4998')).toBeNull()
  })
})
