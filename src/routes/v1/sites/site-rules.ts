import type { FastifyInstance } from 'fastify'
import { decryptSecret, encryptSecret } from '../../../domain/secret-box.js'
import type { Site } from '../../../domain/sites/site.js'
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

/** Whether `secret` is the site's stored webhook secret (false when none is, or it cannot be opened). */
export function isWebhookSecretOf(app: FastifyInstance, site: Pick<Site, 'id' | 'webhookSecretCiphertext'>, secret: string): boolean {
  if (site.webhookSecretCiphertext === null) return false
  try {
    return decryptSecret(app.keyRing.keyFor('webhook-encryption'), site.webhookSecretCiphertext, site.id) === secret
  } catch {
    return false
  }
}
