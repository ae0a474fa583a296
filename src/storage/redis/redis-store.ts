import { readFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import { CLOCK_SKEW_MARGIN_MS } from '../../domain/siteverify/redeem-token.js'
import { TOKEN_LIFETIME_MS } from '../../domain/token/token.js'
import { StartupError } from '../../startup-error.js'
import { DependencyRefusal, redisRefusalOf } from '../dependency-refusal.js'
import type { KeyValueStore, Unsubscribe } from '../ports.js'
import { urlWithoutPassword } from '../url-without-password.js'

const incrementScript = readFileSync(new URL('./scripts/increment-with-expiry.lua', import.meta.url), 'utf8')
const countDistinctScript = readFileSync(new URL('./scripts/count-distinct.lua', import.meta.url), 'utf8')
const incrementAndReadScript = readFileSync(new URL('./scripts/increment-and-read.lua', import.meta.url), 'utf8')
const takeIfEndsWithScript = readFileSync(new URL('./scripts/take-if-ends-with.lua', import.meta.url), 'utf8')
const takeWithTimeToLiveScript = readFileSync(new URL('./scripts/take-with-time-to-live.lua', import.meta.url), 'utf8')
const dataEpochScript = readFileSync(new URL('./scripts/data-epoch.lua', import.meta.url), 'utf8')

interface RedisWithScripts extends Redis {
  incrementWithExpiry(key: string, by: number, ttlMs: number): Promise<number>
  incrementAndRead(keyCount: number, ...keysThenTtl: (string | number)[]): Promise<[number, ...(string | null)[]]>
  countDistinct(markerKey: string, counterKey: string, ttlMs: number): Promise<number>
  takeIfEndsWith(key: string, suffix: string): Promise<string | null>
  takeWithTimeToLive(key: string): Promise<[string, number] | null>
  dataEpoch(key: string, runIdKey: string, hadKnownIt: '0' | '1', clockSkewMarginMs: number, keyPrefix: string, tokenLifetimeMs: number, scanIterations: number): Promise<[string, string]>
}

export interface RedisStoreOptions {
  url: string
  /** Prepended to every key and channel: isolates test runs and tenants sharing one Redis. */
  keyPrefix?: string
  /** How long to wait for the first connection before starting anyway (reported by /ready). */
  connectTimeoutMs?: number
  /** How often the subscriber connection is checked for silence (a PING); 10 s unless a test says. */
  subscriberCheckMs?: number
  /** How often the data's epoch is read again (remembersSince); 1 s unless a test says. */
  epochCheckMs?: number
  /**
   * How far the instances' clocks may run ahead of Redis's (DESIGN section 6: 60 s): after a loss,
   * tokens that carry no epoch (issued before tokens carried it, or before the instance had read
   * it) stamped up to this much after the new epoch are refused too. Tests may shorten it.
   */
  clockSkewMarginMs?: number
}

/** Whether the client becomes ready within the time; false at once when it is ended meanwhile. */
function waitForReady(client: Redis, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true)
  return new Promise((resolve) => {
    const settle = (isReady: boolean) => () => {
      clearTimeout(timer)
      client.off('ready', onReady)
      client.off('end', onEnd)
      resolve(isReady)
    }
    const onReady = settle(true)
    const onEnd = settle(false)
    const timer = setTimeout(onEnd, timeoutMs)
    client.once('ready', onReady)
    client.once('end', onEnd)
  })
}

/** The database a Redis URL names, as the client reads it: the path's number, else `?db=`, else 0. */
export function redisDatabaseOf(url: string): number {
  const parsed = new URL(url)
  return Number(parsed.pathname.slice(1) || parsed.searchParams.get('db') || '0')
}

/** Redis refuses the database REDIS_URL names; /ready shows this message. */
export class RedisDatabaseRefused extends DependencyRefusal {}

export async function openRedisStore(options: RedisStoreOptions): Promise<KeyValueStore> {
  const keyPrefix = options.keyPrefix ?? ''
  const clientOptions = {
    keyPrefix,
    // Fail fast while Redis is away instead of queueing requests: callers answer 503 and
    // /ready reports the outage; the client keeps reconnecting in the background.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    // A connection gone silent (an address that failed over, a route that drops packets) would
    // hold its commands for ever; they fail instead, and dropSilentConnections reconnects.
    commandTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1_000),
  }
  // Not ioredis's auto-pipelining: the store corks the socket per turn instead (writesTogetherPerTurn).
  const client = new Redis(options.url, clientOptions) as RedisWithScripts
  // The client selects the URL's database on every connection, but when the server has no such
  // database it only reports the error and carries on in database 0, where deployments would
  // share data. The error comes before the connection is ready, so the store stops there: at
  // start that stops the start; on a later connection (Redis was away at start, or came back
  // with fewer databases) Redis stays unused until a restart, and /ready says why.
  const database = redisDatabaseOf(options.url)
  let subscriber: Redis | undefined
  let refusal: RedisDatabaseRefused | undefined
  /** The connection's last error until it is ready again: why it was lost, or why it cannot connect (a refused password). */
  let lastError: Error | undefined
  const onError = (error: Error & { command?: { name?: string } }) => {
    lastError = error
    if (error.command?.name !== 'select' || refusal !== undefined) return
    refusal = new RedisDatabaseRefused(`REDIS_URL names database ${database}, which this Redis server refuses (${error.message}); set REDIS_URL to a database the server has (0 to 15 unless its \`databases\` setting says more) and restart`)
    client.disconnect()
    subscriber?.disconnect()
  }
  client.on('error', onError)
  client.defineCommand('incrementWithExpiry', { numberOfKeys: 1, lua: incrementScript })
  client.defineCommand('countDistinct', { numberOfKeys: 2, lua: countDistinctScript })
  client.defineCommand('takeIfEndsWith', { numberOfKeys: 1, lua: takeIfEndsWithScript })
  client.defineCommand('takeWithTimeToLive', { numberOfKeys: 1, lua: takeWithTimeToLiveScript })
  client.defineCommand('dataEpoch', { numberOfKeys: 2, lua: dataEpochScript })
  // Its number of keys varies: given per call, as EVAL takes it.
  client.defineCommand('incrementAndRead', { lua: incrementAndReadScript })
  // Since when Redis has kept its data. Until it is read, and again from every reconnection until
  // it is read anew (Redis may come back empty), the safe answer is what a loss would set: now
  // plus the clock-skew margin, so that a token stamped by a clock running ahead before the loss
  // is not vouched for in the moment before the read answers (it redeemed a second time then).
  // Tokens are stamped by Redis's clock (now()), so it is Redis's clock as last measured, which a
  // reconnection keeps.
  const clockSkewMarginMs = options.clockSkewMarginMs ?? CLOCK_SKEW_MARGIN_MS
  /** Redis's clock less ours, as of the last reading (its error at most half the round trip). */
  let clockOffsetMs = 0
  /** Redis's clock as last measured (KeyValueStore.now). */
  const now = () => Date.now() + clockOffsetMs
  const nothingVouchedFor = () => now() + clockSkewMarginMs
  let remembersSince = nothingVouchedFor()
  /** The epoch's value as read since the last connection; undefined until then (dataEpoch). */
  let dataEpoch: number | undefined
  let hasReadEpoch = false
  const readEpoch = () => {
    const sentAt = Date.now()
    return client.dataEpoch(DATA_EPOCH_KEY, DATA_EPOCH_RUN_ID_KEY, hasReadEpoch ? '1' : '0', clockSkewMarginMs, keyPrefix, TOKEN_LIFETIME_MS, DATA_SCAN_ITERATIONS).then(
      ([value, redisNow]) => {
        remembersSince = Number(value)
        dataEpoch = remembersSince
        hasReadEpoch = true
        // Whole milliseconds: now() stamps tokens, whose issue time is an integer.
        clockOffsetMs = Math.round(Number(redisNow) - (sentAt + Date.now()) / 2)
      },
      () => {},
    )
  }
  client.on('ready', () => {
    lastError = undefined
    remembersSince = nothingVouchedFor()
    dataEpoch = undefined
    void readEpoch()
  })
  const epochCheck = setInterval(() => {
    if (client.status === 'ready') void readEpoch()
  }, options.epochCheckMs ?? EPOCH_CHECK_MS)
  epochCheck.unref()
  await waitForReady(client, options.connectTimeoutMs ?? 3_000)
  if (refusal !== undefined) {
    clearInterval(epochCheck)
    throw new StartupError(refusal.message)
  }
  if (client.status === 'ready') await readEpoch()

  interface Subscription {
    listener: (message: string) => void
    onGap: (() => void) | undefined
  }
  const subscriptions = new Map<string, Set<Subscription>>()

  async function openSubscriber(): Promise<Redis> {
    if (subscriber !== undefined) return subscriber
    // A connection in subscriber mode can run nothing else, so pub/sub gets its own. It keeps an
    // offline queue so that subscriptions are replayed after a reconnect.
    // No command timeout either: a subscription waits for Redis, however long it is away.
    const connection = new Redis(options.url, { ...clientOptions, enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined })
    connection.on('error', onError)
    connection.on('message', (channel: string, message: string) => {
      for (const subscription of subscriptions.get(channel.slice(keyPrefix.length)) ?? []) subscription.listener(message)
    })
    // Every 'ready' after the first is a reconnection: messages of the time in between are lost.
    // Once the channels are subscribed again (ioredis resubscribes too; a second SUBSCRIBE is
    // harmless, and its answer says when it holds), the subscribers hear of the gap.
    let hasBeenReady = false
    connection.on('ready', () => {
      if (!hasBeenReady) {
        hasBeenReady = true
        return
      }
      const channels = [...subscriptions.keys()]
      if (channels.length === 0) return
      connection.subscribe(...channels.map((channel) => keyPrefix + channel)).then(
        () => {
          for (const channel of channels) for (const subscription of subscriptions.get(channel) ?? []) subscription.onGap?.()
        },
        () => {},
      )
    })
    // A subscriber connection gone silent would miss every message for ever (nothing resets it,
    // and it sends no commands that could time out): a PING now and then, unanswered within
    // COMMAND_TIMEOUT_MS, drops it, and the reconnection resubscribes and reports the gap.
    const check = setInterval(() => {
      if (connection.status !== 'ready') return
      const timer = setTimeout(() => connection.disconnect(true), COMMAND_TIMEOUT_MS)
      connection.ping().then(() => clearTimeout(timer), () => clearTimeout(timer))
    }, options.subscriberCheckMs ?? SUBSCRIBER_CHECK_MS)
    check.unref()
    connection.once('end', () => clearInterval(check))
    subscriber = connection
    return connection
  }

  let isClosing = false
  const store: KeyValueStore = {
    kind: 'redis',
    remembersSince: () => remembersSince,
    dataEpoch: () => dataEpoch,
    now,
    watchConnection(listener) {
      // ioredis tells 'close' at every failed reconnection attempt too: only the change is told.
      let isUp = client.status === 'ready'
      let toldRefusal: string | undefined
      const onClose = () => {
        if (!isUp || isClosing) return
        isUp = false
        toldRefusal = undefined
        listener('lost')
      }
      // Why reconnecting fails, when Redis says so (a password changed): told once per reason.
      const onError = (error: Error) => {
        const reason = redisRefusalOf(error)?.message
        if (isUp || isClosing || reason === undefined || reason === toldRefusal) return
        toldRefusal = reason
        listener('refused', reason)
      }
      const onReady = () => {
        if (isUp) return
        isUp = true
        listener('back')
      }
      client.on('close', onClose)
      client.on('error', onError)
      client.on('ready', onReady)
      // Away at start: there was no connection to lose, so nothing else would say so.
      if (!isUp && !isClosing && refusal === undefined) {
        const reason = redisRefusalOf(lastError)?.message
        toldRefusal = reason
        if (reason === undefined) listener('unreachable', urlWithoutPassword(options.url))
        else listener('refused', reason)
      }
      return () => {
        client.off('close', onClose)
        client.off('error', onError)
        client.off('ready', onReady)
      }
    },
    async findForgetfulness() {
      try {
        const [, policy] = await client.config('GET', 'maxmemory-policy')
        const [, limit] = await client.config('GET', 'maxmemory')
        if (Number(limit) === 0 || policy === 'noeviction') return undefined
        return (
          `Redis evicts keys under its memory limit (maxmemory ${limit} bytes, maxmemory-policy ${policy}): outstanding challenges, ` +
          'the markers that make tokens single-use and rate-limit windows may vanish before they expire; set maxmemory-policy noeviction'
        )
      } catch {
        // CONFIG is often disabled on managed Redis: nothing to tell.
        return undefined
      }
    },
    get: (key) => client.get(key),
    getMany: (keys) => (keys.length === 0 ? Promise.resolve([]) : client.mget(...keys)),
    async set(key, value, ttlMs) {
      await client.set(key, value, 'PX', Math.max(1, Math.ceil(ttlMs)))
    },
    async setIfAbsent(key, value, ttlMs) {
      return (await client.set(key, value, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX')) === 'OK'
    },
    async take(key) {
      const taken = await client.takeWithTimeToLive(key)
      if (taken === null) return null
      const [value, ttl] = taken
      return { value, timeToLiveMs: ttl < 0 ? Number.POSITIVE_INFINITY : Number(ttl) }
    },
    takeIfEndsWith: (key, suffix) => client.takeIfEndsWith(key, suffix),
    async delete(key) {
      await client.del(key)
    },
    async increment(key, ttlMs, by = 1) {
      return Number(await client.incrementWithExpiry(key, by, Math.max(1, Math.ceil(ttlMs))))
    },
    async incrementAndRead(key, ttlMs, readKeys) {
      const [count, ...values] = await client.incrementAndRead(1 + readKeys.length, key, ...readKeys, Math.max(1, Math.ceil(ttlMs)))
      return { count: Number(count), values }
    },
    async countDistinct(markerKey, counterKey, ttlMs) {
      return Number(await client.countDistinct(markerKey, counterKey, Math.max(1, Math.ceil(ttlMs))))
    },
    async timeToLive(key) {
      const ttl = await client.pttl(key)
      return ttl < 0 && ttl !== -1 ? null : ttl === -1 ? Number.POSITIVE_INFINITY : ttl
    },
    async expire(key, ttlMs) {
      return (await client.pexpire(key, Math.max(1, Math.ceil(ttlMs)))) === 1
    },
    async publish(channel, message) {
      // ioredis does not prefix channel names; do it here so prefixes isolate pub/sub too.
      await client.publish(keyPrefix + channel, message)
    },
    async subscribe(channel, listener, onGap): Promise<Unsubscribe> {
      const connection = await openSubscriber()
      let channelSubscriptions = subscriptions.get(channel)
      if (channelSubscriptions === undefined) {
        channelSubscriptions = new Set()
        subscriptions.set(channel, channelSubscriptions)
        await connection.subscribe(keyPrefix + channel)
      }
      const subscription: Subscription = { listener, onGap }
      channelSubscriptions.add(subscription)
      return async () => {
        channelSubscriptions.delete(subscription)
        if (channelSubscriptions.size === 0) {
          subscriptions.delete(channel)
          // Not waited for: nothing is delivered for the channel any more either way, and a
          // connection that does not answer (gone silent, or away) would hold the close up.
          connection.unsubscribe(keyPrefix + channel).catch(() => undefined)
        }
      }
    },
    async ping() {
      if (refusal !== undefined) throw refusal
      try {
        // A write, not PING: a Redis that answers but refuses writes (full under noeviction, a
        // replica after a failover) fails every request that needs it, so it is not ready.
        await client.set(READY_PROBE_KEY, '1', 'PX', 10_000)
      } catch (error) {
        throw redisRefusalOf(error) ?? (client.status === 'ready' ? undefined : redisRefusalOf(lastError)) ?? error
      }
    },
    async close() {
      isClosing = true
      clearInterval(epochCheck)
      subscriber?.disconnect()
      await client.quit().catch(() => client.disconnect())
    },
  }
  return aroundCommands(store, writesTogetherPerTurn(client), dropSilentConnection(client, () => !isClosing && refusal === undefined))
}

/** How long a command may wait for its answer; Redis answers in well under a millisecond. */
const COMMAND_TIMEOUT_MS = 2_000

const SUBSCRIBER_CHECK_MS = 10_000

/** The key /ready writes to find out whether Redis takes writes (it expires in 10 s). */
const READY_PROBE_KEY = 'ready-probe'

/** The key (without expiry) whose value says since when Redis has kept its data. */
const DATA_EPOCH_KEY = 'data-epoch'
/**
 * The key (without expiry) beside it that names the Redis process that wrote or last confirmed the
 * epoch (INFO server's run_id): an epoch restored from a snapshot by a new process is no proof
 * that the data after the snapshot survived (data-epoch.lua).
 */
const DATA_EPOCH_RUN_ID_KEY = 'data-epoch-run-id'
/**
 * How many SCAN iterations (of COUNT 1000) the epoch's script may spend, when the key is missing for
 * an instance that never read it, looking for the service's other keys (data-epoch.lua): a Redis
 * an earlier release used, which never wrote the key, kept its data. Once per instance start, a few
 * milliseconds of Redis at most; in a database the service has to itself the first finds one.
 */
const DATA_SCAN_ITERATIONS = 10
/**
 * How often the epoch is read again. A flush (FLUSHDB, FLUSHALL) keeps the connection, so only this
 * reading notices it: until it does, a spent token whose single-use marker the flush took could
 * redeem again. Checking the epoch with every redemption would close that second for good, at the
 * price of a second command per Siteverify (about a tenth of its CPU); a reading a second costs
 * nothing.
 */
const EPOCH_CHECK_MS = 1_000

/**
 * Holds the commands of one turn of the event loop (a request's reads and writes, and those of
 * every other request read in the same turn) for one write to the socket: the first command of
 * a turn corks it, and it is uncorked once the turn's I/O callbacks are done (setImmediate), so
 * they leave together in one writev. ioredis's auto-pipelining batches the same way, but through
 * a Pipeline object per batch, and under load much of what those batches allocate outlives the
 * young generation's collections: with it, a third of what a loop of GETs allocated was copied
 * and then promoted, against almost nothing this way, and verify's collections paused the
 * event loop for 8-16 ms every 150-250 ms (bench/README.md, "The session of 2026-11-28
 * (seventeenth)").
 */
function writesTogetherPerTurn(client: Redis): () => void {
  let corked: Redis['stream'] | undefined
  const release = () => {
    const stream = corked
    corked = undefined
    stream?.uncork()
  }
  return () => {
    if (corked !== undefined || client.status !== 'ready') return
    corked = client.stream
    corked.cork()
    setImmediate(release)
  }
}

/**
 * ioredis never gives up on a connection that has gone silent: nothing resets it, so it never
 * reconnects. A command that times out (COMMAND_TIMEOUT_MS) drops the connection, once until the
 * client is ready again, and the client reconnects on a fresh one (its retry strategy), while
 * the failed command's caller answers 503.
 */
function dropSilentConnection(client: Redis, mayReconnect: () => boolean): (error: unknown) => never {
  let isReconnecting = false
  return (error) => {
    if (error instanceof Error && error.message === 'Command timed out' && !isReconnecting && mayReconnect()) {
      isReconnecting = true
      client.once('ready', () => {
        isReconnecting = false
      })
      client.disconnect(true)
    }
    throw error
  }
}

/** Members that send nothing (remembersSince, dataEpoch, now, watchConnection), or that wait for Redis as long as it takes (close, subscribe). */
const NOT_COMMANDS = new Set(['remembersSince', 'dataEpoch', 'now', 'watchConnection', 'close', 'subscribe'])

/** The store with `beforeCommand` run before every command and `onFailure` on every failed one. */
function aroundCommands(store: KeyValueStore, beforeCommand: () => void, onFailure: (error: unknown) => never): KeyValueStore {
  const guarded = Object.entries(store).map(([name, member]: [string, unknown]): [string, unknown] => {
    if (typeof member !== 'function' || NOT_COMMANDS.has(name)) return [name, member]
    const command = member as (...args: unknown[]) => unknown
    return [name, (...args: unknown[]) => {
      beforeCommand()
      const answer = command(...args)
      return answer instanceof Promise ? answer.catch(onFailure) : answer
    }]
  })
  return Object.fromEntries(guarded) as unknown as KeyValueStore
}
