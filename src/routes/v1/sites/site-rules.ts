import type { FastifyInstance } from 'fastify'
import { encryptSecret } from '../../../domain/secret-box.js'
import type { InputRules } from '../../../domain/sites/site-input.js'

/** Webhooks in production, or wherever private targets are refused, must use https; and name no address deliveries are refused at. */
export function inputRulesOf(app: FastifyInstance): InputRules {
  return {
    isHttpsRequired: app.config.environment === 'production' || !app.config.allowPrivateWebhooks,
    allowPrivateWebhooks: app.config.allowPrivateWebhooks,
  }
}


/** The stored form of a webhook secret, bound to its site so it cannot be moved to another row. */
export function sealWebhookSecret(app: FastifyInstance, siteId: string, secret: string): string {
  return encryptSecret(app.keyRing.keyFor('webhook-encryption'), secret, siteId)
}
