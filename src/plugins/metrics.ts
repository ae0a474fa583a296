import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Gauge } from 'prom-client'
import { createBusinessCounters, type BusinessCounters } from '../metrics/business-counters.js'
import { createMetricsRegistry, type MetricsRegistry } from '../metrics/registry.js'
import { clockOffsetMsOf } from '../storage/clock-offset.js'
import { checkDependency } from '../storage/dependency-check.js'
import { isMemoryStore } from '../storage/memory/memory-store.js'
import { trackFailingWrites } from './failing-writes.js'
import { writeAtShutdown } from './storage.js'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: MetricsRegistry
    counters: BusinessCounters
  }
}

export interface MetricsOptions {
  /** How often increments are written to the database; the issue asks for at most 5 s. */
  flushIntervalMs?: number
}

async function metricsPlugin(app: FastifyInstance, options: MetricsOptions): Promise<void> {
  const metrics = createMetricsRegistry()
  const counters = createBusinessCounters(metrics.registry, app.database)
  await counters.load()
  app.decorate('metrics', metrics)
  app.decorate('counters', counters)

  // Whether each store answers, by /ready's own check, run when Prometheus scrapes (no cost on
  // the requests). The embedded stores report under the same names: PGlite as postgresql, the
  // in-process store as redis (always 1).
  new Gauge({
    name: 'tollgate_dependency_up',
    help: 'Whether the dependency answers and takes writes (1) or not (0), checked as /ready does at each scrape.',
    labelNames: ['dependency'],
    registers: [metrics.registry],
    async collect() {
      const [database, keyValue] = await Promise.all([
        checkDependency(app.database.kind, () => app.database.ping()),
        checkDependency(app.keyValue.kind, () => app.keyValue.ping()),
      ])
      this.set({ dependency: 'postgresql' }, database.status === 'up' ? 1 : 0)
      this.set({ dependency: 'redis' }, keyValue.status === 'up' ? 1 : 0)
    },
  })

  // Tokens are stamped and judged by Redis's clock, as this instance measures it every second; the
  // offset shows an instance whose clock drifts (a warning is logged beyond 30 s). The in-process store's clock is the process's: 0.
  new Gauge({
    name: 'tollgate_clock_offset_seconds',
    help: "How far this instance's clock runs ahead of Redis's (negative: behind), as last measured; keep it near 0 with NTP.",
    registers: [metrics.registry],
    collect() {
      this.set(clockOffsetMsOf(app.keyValue) / 1000)
    },
  })

  // The in-process store's entries (challenges, used-token markers, rate windows, history), which
  // Redis' DBSIZE shows for the Redis store: only an instance on the embedded stores has it.
  const keyValue = app.keyValue
  if (isMemoryStore(keyValue)) {
    new Gauge({
      name: 'tollgate_memory_store_entries',
      help: "Entries held by the in-process store (expired ones not yet swept included); absent with Redis.",
      registers: [metrics.registry],
      collect() {
        this.set(keyValue.size())
      },
    })
  }

  // The route pattern, not the URL, keeps the label set bounded; unknown routes share one label.
  // Each label combination's series is looked up once: prom-client hashes the labels otherwise.
  const series = new Map<string, { observe(seconds: number): void }>()
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const labels = `${request.method} ${reply.statusCode} ${route}`
    let histogram = series.get(labels)
    if (histogram === undefined) {
      histogram = metrics.requestDuration.labels({ method: request.method, route, status_code: String(reply.statusCode) })
      series.set(labels, histogram)
    }
    histogram.observe(reply.elapsedTime / 1000)
    done()
  })

  const failures = trackFailingWrites(app.log, {
    failed: 'could not store metric counters',
    recovered: () => 'metric counters written again',
  })
  const timer = setInterval(() => {
    counters.flush().then(
      () => failures.succeeded(),
      (error: unknown) => failures.failed(error),
    )
  }, options.flushIntervalMs ?? 5_000)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await writeAtShutdown(app, 'metric counter increments', {
      flush: () => counters.flush({ readBack: false }),
      countUnwritten: () => counters.countUnwritten(),
      countInFlight: () => counters.countInFlight(),
      // One INSERT: nothing lands part of the way.
      lastLandedAt: () => 0,
    })
  })
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['storage'] })
