import { collectDefaultMetrics, Histogram, Registry } from 'prom-client'

export interface MetricsRegistry {
  registry: Registry
  requestDuration: Histogram<'method' | 'route' | 'status_code'>
}

/**
 * prom-client names three gauges with a `_total` suffix, which Prometheus reserves for counters
 * (`promtool check metrics` rejects them). They are dropped: `nodejs_active_resources` (by type)
 * and `nodejs_active_handles` already carry the same figures under valid names.
 */
const misnamedDefaultGauges = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

/** One registry per app (not prom-client's global one) so that tests can build many apps. */
export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  for (const name of misnamedDefaultGauges) registry.removeSingleMetric(name)
  const requestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  })
  return { registry, requestDuration }
}
