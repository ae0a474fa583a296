import { EventEmitter } from 'node:events'
import type { KeyValueStore } from '../ports.js'

export interface MemoryStoreOptions {
  now?: () => number
  /** How often a slice of the entries is checked for expiry (default 1 s). */
  sweepIntervalMs?: number
  /** How many sweeps make one pass over all entries (default 10). */
  sweepsPerPass?: number
}

export interface MemoryStore extends KeyValueStore {
  readonly kind: 'memory'
  /** Entries held, expired ones not yet dropped included. */
  size(): number
}

/** Whether a store is the in-process one, whose entries can be counted (size). */
export function isMemoryStore(store: KeyValueStore): store is MemoryStore {
  return store.kind === 'memory' && typeof (store as Partial<MemoryStore>).size === 'function'
}

/**
 * Entries live in slots: a Map from key to slot number, and per slot its key, its value and its
 * expiry in parallel arrays, the expiries in a Float64Array. An entry is then two heap objects
 * (its key and value strings) rather than four (with an entry object and a boxed expiry), which
 * halves what the garbage collector marks when the store holds hundreds of thousands of entries
 * (bench/README.md), and the sweep reads expiries from one flat array.
 */
class Slots {
  readonly index = new Map<string, number>()
  keys: (string | undefined)[] = []
  values: string[] = []
  expiries = new Float64Array(1024)
  private readonly free: number[] = []
  private used = 0

  /** Slots handed out so far, freed ones included: the range the sweep walks. */
  get allocated(): number {
    return this.used
  }

  /** The slot of a live key; an expired one is dropped. */
  find(key: string, time: number): number {
    const slot = this.index.get(key)
    if (slot === undefined) return -1
    if (this.expiries[slot]! <= time) {
      this.release(key, slot)
      return -1
    }
    return slot
  }

  put(key: string, value: string, expiresAt: number): void {
    const slot = this.index.get(key)
    if (slot === undefined) {
      this.insert(key, value, expiresAt)
      return
    }
    this.values[slot] = value
    this.expiries[slot] = expiresAt
  }

  /**
   * Adds a key that find() has just found absent, without looking it up again: in a map of
   * hundreds of thousands of keys each lookup is a few cache misses (bench/README.md).
   */
  insert(key: string, value: string, expiresAt: number): void {
    const slot = this.free.pop() ?? this.grow()
    this.index.set(key, slot)
    this.keys[slot] = key
    this.values[slot] = value
    this.expiries[slot] = expiresAt
  }

  /** The value of a live key with its expiry, dropping the key (null when there is none). */
  take(key: string, time: number): { value: string; expiresAt: number } | null {
    const slot = this.find(key, time)
    if (slot < 0) return null
    const taken = { value: this.values[slot]!, expiresAt: this.expiries[slot]! }
    this.release(key, slot)
    return taken
  }

  remove(key: string): void {
    const slot = this.index.get(key)
    if (slot !== undefined) this.release(key, slot)
  }

  /** Drops the expired entries among slots [from, to). */
  sweep(from: number, to: number, time: number): void {
    const end = Math.min(to, this.used)
    for (let slot = from; slot < end; slot++) {
      const key = this.keys[slot]
      if (key !== undefined && this.expiries[slot]! <= time) this.release(key, slot)
    }
  }

  clear(): void {
    this.index.clear()
    this.keys = []
    this.values = []
    this.free.length = 0
    this.used = 0
  }

  private release(key: string, slot: number): void {
    this.index.delete(key)
    this.keys[slot] = undefined
    this.values[slot] = ''
    this.free.push(slot)
  }

  private grow(): number {
    if (this.used === this.expiries.length) {
      const larger = new Float64Array(this.expiries.length * 2)
      larger.set(this.expiries)
      this.expiries = larger
    }
    return this.used++
  }
}

/**
 * The embedded key-value store: the Redis store's semantics (TTL, atomic take, atomic
 * increment with expiry, pub/sub) for a single process. JavaScript runs one callback at a
 * time, so every method is atomic as long as it does not await between read and write.
 */
export function openMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const { now = Date.now, sweepIntervalMs = 1_000, sweepsPerPass = 10 } = options
  const slots = new Slots()
  const openedAt = now()
  const channels = new EventEmitter()
  channels.setMaxListeners(0)

  const read = (key: string, time = now()): string | null => {
    const slot = slots.find(key, time)
    return slot < 0 ? null : slots.values[slot]!
  }

  const increment = (key: string, ttlMs: number, by: number): number => {
    const time = now()
    const slot = slots.find(key, time)
    if (slot < 0) {
      slots.insert(key, String(by), time + ttlMs)
      return by
    }
    const current = Number(slots.values[slot])
    if (!Number.isInteger(current)) throw new Error(`value at ${key} is not an integer`)
    // An existing counter keeps its slot and its expiry.
    slots.values[slot] = String(current + by)
    return current + by
  }

  // Expired keys are dropped when read; the sweep bounds memory for keys never read again. Each
  // sweep checks a slice of the slots, so that no pause grows with the store's size.
  let sweepCursor = 0
  const sweep = setInterval(() => {
    const slice = Math.max(1024, Math.ceil(slots.allocated / sweepsPerPass))
    slots.sweep(sweepCursor, sweepCursor + slice, now())
    sweepCursor += slice
    if (sweepCursor >= slots.allocated) sweepCursor = 0
  }, sweepIntervalMs)
  sweep.unref()

  return {
    kind: 'memory',
    remembersSince: () => openedAt,
    dataEpoch: () => openedAt,
    now,
    size: () => slots.index.size,
    async get(key) {
      return read(key)
    },
    async getMany(keys) {
      const time = now()
      return keys.map((key) => read(key, time))
    },
    async set(key, value, ttlMs) {
      slots.put(key, value, now() + ttlMs)
    },
    async setIfAbsent(key, value, ttlMs) {
      const time = now()
      if (slots.find(key, time) >= 0) return false
      slots.insert(key, value, time + ttlMs)
      return true
    },
    async take(key) {
      const time = now()
      const taken = slots.take(key, time)
      return taken === null ? null : { value: taken.value, timeToLiveMs: taken.expiresAt - time }
    },
    async takeIfEndsWith(key, suffix) {
      const time = now()
      return read(key, time)?.endsWith(suffix) === true ? (slots.take(key, time)?.value ?? null) : null
    },
    async delete(key) {
      slots.remove(key)
    },
    async increment(key, ttlMs, by = 1) {
      return increment(key, ttlMs, by)
    },
    async incrementAndRead(key, ttlMs, readKeys) {
      const count = increment(key, ttlMs, 1)
      const time = now()
      return { count, values: readKeys.map((readKey) => read(readKey, time)) }
    },
    async countDistinct(markerKey, counterKey, ttlMs) {
      const time = now()
      if (slots.find(markerKey, time) >= 0) return Number(read(counterKey, time) ?? 0)
      // A new marker expires with the counter, never after it (see count-distinct.lua).
      const counter = slots.find(counterKey, time)
      slots.insert(markerKey, '1', counter < 0 ? time + ttlMs : slots.expiries[counter]!)
      return increment(counterKey, ttlMs, 1)
    },
    async timeToLive(key) {
      const time = now()
      const slot = slots.find(key, time)
      return slot < 0 ? null : slots.expiries[slot]! - time
    },
    async expire(key, ttlMs) {
      const time = now()
      const slot = slots.find(key, time)
      if (slot >= 0) slots.expiries[slot] = time + ttlMs
      return slot >= 0
    },
    async publish(channel, message) {
      channels.emit(channel, message)
    },
    async subscribe(channel, listener) {
      channels.on(channel, listener)
      return async () => {
        channels.off(channel, listener)
      }
    },
    async ping() {},
    async close() {
      clearInterval(sweep)
      slots.clear()
      channels.removeAllListeners()
    },
  }
}
