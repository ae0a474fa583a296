import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { isSameInConstantTime } from '../../../domain/mac.js'
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

/**
 * The site's stored webhook secret: null when none is set, undefined when it cannot be opened
 * (TOLLGATE_SECRET changed since it was sealed).
 */
export function openWebhookSecret(app: FastifyInstance, site: Pick<Site, 'id' | 'webhookSecretCiphertext'>): string | null | undefined {
  if (site.webhookSecretCiphertext === null) return null
  try {
    return decryptSecret(app.keyRing.keyFor('webhook-encryption'), site.webhookSecretCiphertext, site.id)
  } catch {
    return undefined
  }
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest()

/** Whether two webhook secrets are the same, in time that tells nothing of where they differ (digests of equal length). */
export function isSameWebhookSecret(stored: string, sent: string): boolean {
  return isSameInConstantTime(sha256(stored), sha256(sent))
}
