import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { SurgeMeter, type SurgeAlert } from '../domain/challenge/site-surge.js'

declare module 'fastify' {
  interface FastifyInstance {
    surge: SurgeMeter
  }
}

export interface SurgeOptions {
  /** How often this instance adds its counts to the fleet's and reads theirs back (1 s by default). */
  flushIntervalMs?: number
  /** The counting window (a minute by default). */
  windowMs?: number
  /** How long a site's rate must stay below its threshold for its surge to end (SURGE_QUIET_MS by default). */
  quietMs?: number
}

/**
 * The fleet-wide challenge rate of the sites with surge protection on (SurgeMeter). A store that
 * does not answer loses the counts of that flush (logged once until it answers again); the rate
 * then lags, and challenges are issued as ever. A surge's beginning and end are logged and
 * emitted as `surge.started` and `surge.ended` (the webhooks of the sites that ask for them) by
 * the one instance that finds them.
 */
async function surgePlugin(app: FastifyInstance, options: SurgeOptions): Promise<void> {
  const onAlert = (alert: SurgeAlert): void => {
    const { siteId, challengesPerMinute, threshold, startedAt } = alert
    app.log.info({ siteId, challengesPerMinute, threshold, startedAt }, alert.kind === 'started' ? 'surge began' : 'surge ended')
    app.counters.increment('surgeAlerts', { kind: alert.kind })
    app.events.emit(alert.kind === 'started' ? 'surge.started' : 'surge.ended', alert)
  }
  const meter = new SurgeMeter(app.keyValue, { windowMs: options.windowMs, quietMs: options.quietMs, onAlert })
  app.decorate('surge', meter)
  let failing = false
  const flush = async (): Promise<void> => {
    try {
      await meter.flush()
      if (failing) app.log.info('surge counts are written again')
      failing = false
    } catch (error) {
      if (!failing) app.log.warn({ err: error }, 'could not write surge counts; will retry')
      failing = true
    }
  }
  let flushing: Promise<void> | undefined
  const timer = setInterval(() => {
    flushing ??= flush().finally(() => {
      flushing = undefined
    })
  }, options.flushIntervalMs ?? 1_000)
  timer.unref()
  // The last second's counts go to the others too (this runs before the stores close, and
  // before the webhooks settle: a surge this flush finds begun or ended is still sent).
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await flushing
    await flush()
  })
}

export default fp(surgePlugin, { name: 'surge', dependencies: ['storage', 'metrics', 'events'] })
