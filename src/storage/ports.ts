/**
 * The storage ports. Domain code and routes depend on these interfaces only; the
 * implementations (PostgreSQL or PGlite, Redis or memory) are chosen at start from the
 * configuration and are interchangeable: one contract suite per port runs on all of them.
 */

/** Something that runs SQL: the database itself or an open transaction. */
export interface SqlExecutor {
  /** Runs one parameterised statement ($1, $2, ...) and returns its rows. */
  query<Row extends object = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>
}

/** A statement and its parameters. */
export interface SqlStatement {
  sql: string
  params?: readonly unknown[]
}

/** A column of a bulk load, with the type its values are written as; timestamptz values are Unix milliseconds. */
export interface BulkColumn {
  name: string
  type: 'uuid' | 'text' | 'text[]' | 'int2' | 'int4' | 'timestamptz'
}

/** Rows to append to a table: one array of values per column, all of one length (null is NULL). */
export interface BulkLoad {
  table: string
  columns: readonly BulkColumn[]
  values: readonly (readonly unknown[])[]
}

/**
 * The system of record. The same SQL runs on PostgreSQL and PGlite, with the same type
 * mapping: int8 and numeric come back as JS numbers, timestamptz as Date, jsonb parsed.
 */
export interface SqlDatabase extends SqlExecutor {
  readonly kind: 'postgres' | 'pglite'
  /** Runs a script of several statements without parameters (migrations). */
  execute(script: string): Promise<void>
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws.
   * `isUnbounded` lifts the client's own wait limit on each statement (migrations, which may
   * rewrite large tables; they lift the server's statement timeout themselves).
   */
  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options?: { isUnbounded?: boolean }): Promise<T>
  /**
   * Runs `first`, then appends the rows of `load`, in one transaction: the cheapest way in for many
   * rows (PGlite: a binary COPY, which its worker encodes; PostgreSQL: one INSERT of an array
   * parameter per column, with a single statement of `first` as its common table expression, which
   * must then write: a CTE that only reads may not run). A value the column cannot hold fails the
   * whole load with PostgreSQL's data exception (SQLSTATE class 22), as an INSERT would.
   */
  loadRows(load: BulkLoad, first?: readonly SqlStatement[]): Promise<void>
  ping(): Promise<void>
  /** Trouble the database deals with by itself (the embedded one restarting its worker), for the log. */
  onIncident?(listener: (incident: DatabaseIncident) => void): void
  close(): Promise<void>
}

export interface DatabaseIncident {
  message: string
  error?: Error
  /** The database answers again. */
  isRecovered: boolean
}

export type Unsubscribe = () => Promise<void>

/**
 * The hot, short-lived store (Redis, or memory for a single embedded process). Every method
 * is atomic on its own; keys are plain strings and callers keep multi-key work on one hash tag.
 */
export interface KeyValueStore {
  readonly kind: 'redis' | 'memory'
  get(key: string): Promise<string | null>
  /** The values of several keys in one step (null where absent). On Redis Cluster they must share a hash tag. */
  getMany(keys: readonly string[]): Promise<(string | null)[]>
  /** Sets the value with a time to live in milliseconds. */
  set(key: string, value: string, ttlMs: number): Promise<void>
  /** Sets the value only when the key is absent; true when this call set it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>
  /**
   * Atomically returns the value, with the milliseconds it had left to live (by the store's own
   * clock, which all instances share; Infinity without an expiry), and deletes the key: of
   * concurrent callers, one gets it.
   */
  take(key: string): Promise<{ value: string; timeToLiveMs: number } | null>
  /**
   * take, only when the value ends with `suffix`; otherwise null, and the key is left as it is
   * (a newer value that a caller must not consume).
   */
  takeIfEndsWith(key: string, suffix: string): Promise<string | null>
  delete(key: string): Promise<void>
  /** Atomically adds `by` (default 1) and returns the new value; a new key expires after ttlMs. */
  increment(key: string, ttlMs: number, by?: number): Promise<number>
  /**
   * increment by 1 and, in the same atomic step, reads `readKeys`: a counter and the state beside
   * it in one command. On Redis Cluster all the keys must share a hash tag.
   */
  incrementAndRead(key: string, ttlMs: number, readKeys: readonly string[]): Promise<{ count: number; values: (string | null)[] }>
  /**
   * Counts distinct members in one atomic step: sets `markerKey` when absent and, only then,
   * increments `counterKey`. A new counter expires after ttlMs, a new marker with the counter (so
   * counts restart whole in the next window). Returns the counter. On Redis Cluster the two keys
   * must share a hash tag.
   */
  countDistinct(markerKey: string, counterKey: string, ttlMs: number): Promise<number>
  /** Remaining time to live in milliseconds, or null when the key does not exist. */
  timeToLive(key: string): Promise<number | null>
  /** Gives a key that exists a new time to live; false, creating nothing, when it does not. */
  expire(key: string, ttlMs: number): Promise<boolean>
  publish(channel: string, message: string): Promise<void>
  /**
   * Calls listener with every message published on the channel from now on. Messages published
   * while the store's connection was lost are not delivered: onGap, when given, is called once
   * the subscription is back after such a gap, so that the subscriber can drop what those
   * messages would have told it to (the in-process store never has gaps).
   */
  subscribe(channel: string, listener: (message: string) => void, onGap?: () => void): Promise<Unsubscribe>
  /**
   * Since when (epoch ms) the store has kept everything written to it: what it held before may be
   * gone, so a marker's absence proves nothing about that time (a token issued before it may have
   * been redeemed already). The in-process store: its process's start. Redis: when its data began,
   * as a key without expiry says, read at every connection and every second, so that a Redis
   * that lost its data (restarted without persistence, flushed) is noticed.
   */
  remembersSince(): number
  /**
   * Which of the store's lives its data belongs to, as this instance last read it: a token carries
   * the one its issuing instance knew (verify reads it here, sending nothing), and Siteverify
   * refuses a token of another, whose single-use marker may be gone. The in-process store: its
   * opening time. Redis: the value of the key that remembersSince reads, undefined from every
   * connection until it is read anew (a token issued meanwhile carries none, and keeps the
   * issue-time rule).
   */
  dataEpoch(): number | undefined
  /**
   * The store's clock (epoch ms), as this instance best knows it: what windows every instance
   * must agree on (rate limits) are cut by it, so that instances whose clocks differ still count
   * a client in one window. The in-process store: this process's clock. Redis: its TIME, whose
   * offset from ours is measured at every reading of the epoch.
   */
  now(): number
  /**
   * Why the store may forget keys before they expire, when it can tell (Redis evicting keys under
   * a memory limit); logged at start. Undefined when it cannot or need not.
   */
  findForgetfulness?(): Promise<string | undefined>
  /**
   * Calls `listener` when the connection is lost, when reconnecting is refused for a reason the
   * store names (a password changed; once per reason; `detail` is the reason) and when it is back
   * (stores with a connection: Redis), so that the service logs an outage once rather than per
   * request. Watching a store that has no connection yet (Redis away at start) tells at once
   * 'unreachable', with where the store is as `detail` (its URL without the password), or
   * 'refused' when it said why. Returns the way to stop.
   */
  watchConnection?(listener: (state: 'unreachable' | 'lost' | 'refused' | 'back', detail?: string) => void): () => void
  /**
   * Resolves when the store answers and takes writes (/ready); else rejects, with a
   * DependencyRefusal when the store said why (full, read-only, a refused password).
   */
  ping(): Promise<void>
  close(): Promise<void>
}

export interface Storage {
  database: SqlDatabase
  keyValue: KeyValueStore
}
