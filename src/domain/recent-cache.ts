/**
 * A bounded memory of recently used keys: two generations of at most `capacity` entries each.
 * When the current generation is full it becomes the previous one (and the previous one is
 * dropped); an entry read from the previous generation moves back to the current one. So entries
 * in use survive a flood of new keys, unlike a single map cleared when full, and memory stays
 * under 2 x capacity entries, unlike an LRU list, without any bookkeeping on a hit.
 */
export class RecentCache<K, V> {
  #current = new Map<K, V>()
  #previous = new Map<K, V>()

  constructor(readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.#current.get(key)
    if (value !== undefined) return value
    const older = this.#previous.get(key)
    if (older !== undefined) this.set(key, older)
    return older
  }

  set(key: K, value: V): void {
    if (this.#current.size >= this.capacity && !this.#current.has(key)) {
      this.#previous = this.#current
      this.#current = new Map()
    }
    this.#current.set(key, value)
  }

  delete(key: K): void {
    this.#current.delete(key)
    this.#previous.delete(key)
  }

  clear(): void {
    this.#current.clear()
    this.#previous.clear()
  }

  /** The value of `key`, computed by `compute` and kept when it is not there. */
  getOrCompute(key: K, compute: (key: K) => V): V {
    let value = this.get(key)
    if (value === undefined) {
      value = compute(key)
      this.set(key, value)
    }
    return value
  }
}

/**
 * Header values of real browsers (a User-Agent, an Origin or a page's Referer) repeat and stay
 * under this length; a header may hold 16 KB.
 */
const MAX_REMEMBERED_HEADER_LENGTH = 512

/**
 * `compute` of a header's value, remembered in a RecentCache for values of ordinary length only,
 * so that made-up ones of header size cannot fill memory (they are computed each time).
 */
export function rememberPerHeaderValue<V>(compute: (value: string) => V, capacity = 5_000): (value: string) => V {
  const remembered = new RecentCache<string, V>(capacity)
  return (value) => (value.length > MAX_REMEMBERED_HEADER_LENGTH ? compute(value) : remembered.getOrCompute(value, compute))
}
