import { setTimeout } from 'node:timers/promises'
import autocannon from 'autocannon'
import { median } from '../shared.js'

/** Concurrent connections of the load generator (BENCH_CONNECTIONS; autocannon's default is 10). */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)

export interface Measurement {
  requestsPerSecond: number
  /** Server CPU time (user + system) per request, when the comparison could read it. */
  cpuMicrosPerRequest?: number
  /** The kernel's share of it (system time): socket writes, and waking whoever waits for them. */
  systemMicrosPerRequest?: number
  /** The event-loop thread's share of it: one core at most, whatever the other threads do. */
  eventLoopMicrosPerRequest?: number
  p50Ms: number
  p99Ms: number
  requests: number
  failures: number
}

/** What changes from one request to the next: the body and any headers (a client's address). */
export interface RequestVariant {
  body?: string
  headers?: Record<string, string>
}

export interface LoadOptions {
  url: string
  method?: 'GET' | 'POST'
  /** Headers of every request. */
  headers?: Record<string, string>
  /**
   * One variant per request, in order (single-use inputs, distinct clients). They are used
   * round-robin: a run that needs more than there are reuses them, which a single-use route
   * answers with failures.
   */
  variants?: readonly RequestVariant[]
  durationSeconds?: number
  /** Send exactly this many requests instead of running for a time (preparation, not measurement). */
  amount?: number
  connections?: number
  /** Called with every answer and the variant that was sent. */
  onResponse?: (status: number, body: string, variant: RequestVariant | undefined) => void
  /** A 2xx answer that is still a failure (Siteverify answers 200 to everything; verify answers 200 to block). */
  isFailure?: (body: string) => boolean
}

interface ConnectionContext {
  variant?: RequestVariant
}

/** One autocannon run (POST unless told otherwise: every measured route is a POST). */
export async function measureLoad(options: LoadOptions): Promise<Measurement> {
  const { variants } = options
  let next = 0
  let failedAnswers = 0
  const onResponse =
    options.onResponse === undefined && options.isFailure === undefined
      ? undefined
      : (status: number, body: string, context: object) => {
          options.onResponse?.(status, body, (context as ConnectionContext).variant)
          if (status < 300 && options.isFailure?.(body) === true) failedAnswers++
        }
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'POST',
    connections: options.connections ?? CONNECTIONS,
    headers: options.headers,
    // Measurements are timed runs: autocannon ends an `amount` run only on its next one-second
    // tick, which would round the rate.
    ...(options.amount === undefined ? { duration: options.durationSeconds ?? 10 } : { amount: options.amount }),
    requests: [
      {
        method: options.method ?? 'POST',
        ...(variants === undefined
          ? {}
          : {
              // One request in flight per connection (no pipelining), so the connection's context
              // pairs each answer with its variant.
              setupRequest: (request, context) => {
                const variant = variants[next++ % variants.length] ?? {}
                ;(context as ConnectionContext).variant = variant
                if (variant.body !== undefined) request.body = variant.body
                if (variant.headers !== undefined) request.headers = { ...options.headers, ...variant.headers }
                return request
              },
            }),
        ...(onResponse === undefined ? {} : { onResponse }),
      },
    ],
  })
  const requests = result['2xx'] + result.non2xx
  return {
    requestsPerSecond: Math.round(requests / (options.durationSeconds ?? 10)),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests,
    failures: result.non2xx + result.errors + failedAnswers,
  }
}

export interface Comparison {
  baseline: Measurement
  route: Measurement
}

/** CPU time in microseconds, as process.cpuUsage() splits it, and the event-loop thread's where known. */
export interface CpuMicros {
  user: number
  system: number
  eventLoop?: number
}

function addCpu(sum: CpuMicros, part: CpuMicros): void {
  sum.user += part.user
  sum.system += part.system
  sum.eventLoop = sum.eventLoop === undefined || part.eventLoop === undefined ? undefined : sum.eventLoop + part.eventLoop
}

function combine(measurements: Measurement[], cpuMicros: CpuMicros | undefined): Measurement {
  const requests = measurements.reduce((sum, measurement) => sum + measurement.requests, 0)
  return {
    ...(cpuMicros === undefined
      ? {}
      : {
          cpuMicrosPerRequest: Math.round((cpuMicros.user + cpuMicros.system) / requests),
          systemMicrosPerRequest: Math.round(cpuMicros.system / requests),
          ...(cpuMicros.eventLoop === undefined ? {} : { eventLoopMicrosPerRequest: Math.round(cpuMicros.eventLoop / requests) }),
        }),
    requestsPerSecond: Math.round(median(measurements.map((measurement) => measurement.requestsPerSecond))),
    p50Ms: median(measurements.map((measurement) => measurement.p50Ms)),
    p99Ms: Math.max(...measurements.map((measurement) => measurement.p99Ms)),
    requests,
    failures: measurements.reduce((sum, measurement) => sum + measurement.failures, 0),
  }
}

/**
 * The route against the baseline in alternating short rounds, so that both see the same machine
 * (other processes come and go): medians of requests per second, the worst p99 of all rounds.
 * The baseline gets exactly the route's requests (headers and bodies; it ignores them) and its
 * answers go through the same callback, so that the load generator does the same work for both.
 * Single-use variants are shared out over the rounds; each round's share must exceed what the
 * route serves in a round.
 *
 * `readServerCpu` (the server process's CPU time, user and system) adds server CPU per request,
 * which unlike requests per second does not depend on how fast the load generator is.
 * `profileLastRound` is started and stopped around the route's last round only (the baseline
 * shares the server process, so a profile of every round would mix the two).
 */
export async function compareLoads(
  baselineUrl: string,
  route: LoadOptions,
  rounds: number,
  secondsPerRound: number,
  readServerCpu?: () => Promise<CpuMicros>,
  profileLastRound?: { start: () => Promise<void>; stop: () => Promise<void> },
): Promise<Comparison> {
  const baselines: Measurement[] = []
  const routes: Measurement[] = []
  const baselineCpu: CpuMicros = { user: 0, system: 0, eventLoop: 0 }
  const routeCpu: CpuMicros = { user: 0, system: 0, eventLoop: 0 }
  // Work a route leaves behind (the verification log's next batch, within a second) belongs to
  // it: its CPU is read after a pause long enough for that work to finish.
  const noCpu: CpuMicros = { user: 0, system: 0 }
  const timed = async (run: () => Promise<Measurement>, settleMs: number): Promise<[Measurement, CpuMicros]> => {
    const before = (await readServerCpu?.()) ?? noCpu
    const measurement = await run()
    if (readServerCpu !== undefined) await setTimeout(settleMs)
    const after = (await readServerCpu?.()) ?? noCpu
    const eventLoop = after.eventLoop === undefined || before.eventLoop === undefined ? undefined : after.eventLoop - before.eventLoop
    return [measurement, { user: after.user - before.user, system: after.system - before.system, eventLoop }]
  }
  const chunk = route.variants === undefined ? 0 : Math.ceil(route.variants.length / rounds)
  for (let round = 0; round < rounds; round++) {
    const variants = route.variants?.slice(round * chunk, (round + 1) * chunk)
    // The same per-answer callback as the route's, without judging the baseline's constant.
    const isBaselineFailure = route.isFailure === undefined ? undefined : () => false
    const [baseline, baselineMicros] = await timed(() =>
      measureLoad({ ...route, url: baselineUrl, onResponse: undefined, isFailure: isBaselineFailure, variants, durationSeconds: secondsPerRound }), 0,
    )
    const isProfiled = profileLastRound !== undefined && round === rounds - 1
    if (isProfiled) await profileLastRound.start()
    const [measured, routeMicros] = await timed(() => measureLoad({ ...route, variants, durationSeconds: secondsPerRound }), 1_500)
    if (isProfiled) await profileLastRound.stop()
    baselines.push(baseline)
    routes.push(measured)
    addCpu(baselineCpu, baselineMicros)
    addCpu(routeCpu, routeMicros)
  }
  const hasCpu = readServerCpu !== undefined
  return { baseline: combine(baselines, hasCpu ? baselineCpu : undefined), route: combine(routes, hasCpu ? routeCpu : undefined) }
}
