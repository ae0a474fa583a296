import type { FastifyInstance } from 'fastify'
import { encryptSecret } from '../../../domain/secret-box.js'
import type { InputRules } from '../../../domain/sites/site-input.js'

/**
 * Webhooks must use https wherever private targets are refused (production's default), and name
 * no address deliveries are refused at. WEBHOOK_ALLOW_PRIVATE=true allows plain http, in
 * production too: deliveries send to http then, so refusing to save such a URL would only
 * disagree with them (and with the README).
 */
export function inputRulesOf(app: FastifyInstance): InputRules {
  return {
    isHttpsRequired: !app.config.allowPrivateWebhooks,
    allowPrivateWebhooks: app.config.allowPrivateWebhooks,
  }
}


/** The stored form of a webhook secret, bound to its site so it cannot be moved to another row. */
export function sealWebhookSecret(app: FastifyInstance, siteId: string, secret: string): string {
  return encryptSecret(app.keyRing.keyFor('webhook-encryption'), secret, siteId)
}
