import { EventEmitter } from 'node:events'
import type { KeyValueStore } from '../ports.js'

interface Entry {
  value: string
  expiresAt: number
}

/**
 * The embedded key-value store: the Redis store's semantics (TTL, atomic take, atomic
 * increment with expiry, pub/sub) for a single process. JavaScript runs one callback at a
 * time, so every method is atomic as long as it does not await between read and write.
 */
export function openMemoryStore(now: () => number = Date.now): KeyValueStore {
  const entries = new Map<string, Entry>()
  const channels = new EventEmitter()
  channels.setMaxListeners(0)

  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= now()) {
      entries.delete(key)
      return undefined
    }
    return entry
  }

  const increment = (key: string, ttlMs: number, by: number): number => {
    const entry = live(key)
    const current = entry === undefined ? 0 : Number(entry.value)
    if (!Number.isInteger(current)) throw new Error(`value at ${key} is not an integer`)
    const value = current + by
    entries.set(key, { value: String(value), expiresAt: entry?.expiresAt ?? now() + ttlMs })
    return value
  }

  // Expired keys are dropped when read; the sweep bounds memory for keys never read again.
  const sweep = setInterval(() => {
    const time = now()
    for (const [key, entry] of entries) if (entry.expiresAt <= time) entries.delete(key)
  }, 10_000)
  sweep.unref()

  return {
    kind: 'memory',
    async get(key) {
      return live(key)?.value ?? null
    },
    async getMany(keys) {
      return keys.map((key) => live(key)?.value ?? null)
    },
    async set(key, value, ttlMs) {
      entries.set(key, { value, expiresAt: now() + ttlMs })
    },
    async setIfAbsent(key, value, ttlMs) {
      if (live(key) !== undefined) return false
      entries.set(key, { value, expiresAt: now() + ttlMs })
      return true
    },
    async take(key) {
      const entry = live(key)
      if (entry === undefined) return null
      entries.delete(key)
      return entry.value
    },
    async delete(key) {
      entries.delete(key)
    },
    async increment(key, ttlMs, by = 1) {
      return increment(key, ttlMs, by)
    },
    async incrementAndRead(key, ttlMs, readKeys) {
      const count = increment(key, ttlMs, 1)
      return { count, values: readKeys.map((readKey) => live(readKey)?.value ?? null) }
    },
    async countDistinct(markerKey, counterKey, ttlMs) {
      if (live(markerKey) !== undefined) return Number(live(counterKey)?.value ?? 0)
      entries.set(markerKey, { value: '1', expiresAt: now() + ttlMs })
      return increment(counterKey, ttlMs, 1)
    },
    async timeToLive(key) {
      const entry = live(key)
      return entry === undefined ? null : entry.expiresAt - now()
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
      entries.clear()
      channels.removeAllListeners()
    },
  }
}
