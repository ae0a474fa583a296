import { EventEmitter } from 'node:events'
import type { SurgeAlert } from '../domain/challenge/site-surge.js'
import type { Site } from '../domain/sites/site.js'
import type { BlockedVerification } from '../domain/webhooks/webhook-payload.js'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** What happened, for whoever reacts to it (webhooks, metrics). Emitted after the response is decided. */
export interface VerificationBlockedEvent extends BlockedVerification {
  /** The site as the verification read it: its webhook settings, without a database read (which may fail). */
  site?: Site
}

export interface ServiceEvents {
  'verification.blocked': [VerificationBlockedEvent]
  /** A site's challenge rate reached its surge threshold (told by one instance of the fleet). */
  'surge.started': [SurgeAlert]
  /** It stayed below it long enough for the surge to be over. */
  'surge.ended': [SurgeAlert]
}

declare module 'fastify' {
  interface FastifyInstance {
    events: EventEmitter<ServiceEvents>
  }
}

/**
 * An in-process event bus: the verification flow emits, the webhook dispatcher listens, and
 * neither imports the other. A listener must never throw into the emitter (it would reach the
 * request that emitted); listeners catch and log their own failures.
 */
async function eventsPlugin(app: FastifyInstance): Promise<void> {
  const events = new EventEmitter<ServiceEvents>()
  events.setMaxListeners(50)
  app.decorate('events', events)
  app.addHook('onClose', async () => {
    events.removeAllListeners()
  })
}

export default fp(eventsPlugin, { name: 'events' })
