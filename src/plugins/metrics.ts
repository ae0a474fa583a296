import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { createBusinessCounters, type BusinessCounters } from '../metrics/business-counters.js'
import { createMetricsRegistry, type MetricsRegistry } from '../metrics/registry.js'
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

  const timer = setInterval(() => {
    counters.flush().catch((error: unknown) => app.log.warn({ err: error }, 'could not store metric counters; will retry'))
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
