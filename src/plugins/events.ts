import { EventEmitter } from 'node:events'
import type { SurgeAlert } from '../domain/challenge/site-surge.js'
import type { Site } from '../domain/sites/site.js'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** What happened, for whoever reacts to it (webhooks, metrics). Emitted after the response is decided. */
export interface VerificationBlockedEvent {
  siteId: string
  /** The site as the verification read it: its webhook settings, without a database read (which may fail). */
  site?: Site
  timestamp: Date
  riskScore: number
  anomalies: string[]
  /** Two-letter country code, or 'XX' when unknown. */
  countryCode: string
  /** The verify request's id: its row in the verification log, the start of the visitor's reference. */
  verificationId: string
  /** The device's ephemeral id on the site, when the submission described one. */
  device: string | null
  /** The page's host (from Origin or Referer), when the browser sent one. */
  hostname: string | null
  /** The page's action (the SDK's action option), when the page gave one. */
  pageAction: string | null
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
