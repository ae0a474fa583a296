import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { createBusinessCounters, type BusinessCounters } from '../metrics/business-counters.js'
import { createMetricsRegistry, type MetricsRegistry } from '../metrics/registry.js'

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

  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, not the URL, keeps the label set bounded; unknown routes share one label.
    const route = request.routeOptions.url ?? 'unmatched'
    metrics.requestDuration.observe(
      { method: request.method, route, status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    )
  })

  const timer = setInterval(() => {
    counters.flush().catch((error: unknown) => app.log.warn({ err: error }, 'could not store metric counters; will retry'))
  }, options.flushIntervalMs ?? 5_000)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await counters.flush().catch((error: unknown) => app.log.error({ err: error }, 'could not store metric counters at shutdown'))
  })
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['storage'] })
