import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { isSameInConstantTime } from '../../../domain/mac.js'
import { decryptSecret, encryptSecret } from '../../../domain/secret-box.js'
import type { Site } from '../../../domain/sites/site.js'
import type { InputRules } from '../../../domain/sites/site-input.js'
import type { SiteRole } from '../../../domain/sites/site-roles.js'
import { ApiError, throwIfInvalid } from '../../../errors.js'
import type { SqlExecutor } from '../../../storage/ports.js'
import { createTwoFactorRepository } from '../../../storage/sql/two-factor-repository.js'

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

/**
 * A site's requirement of two-factor authentication of its members (settings.requireTwoFactor),
 * from `current` to what a request asks (null: back to the default, off): only the owner changes
 * it (403 forbidden for an admin, who could otherwise lift what the owner requires), and turns it
 * on only with two-factor on for its own account (400 validation_error), as GitHub asks of an
 * organisation's owner: a requirement its own author does not meet protects nothing.
 */
export async function checkTwoFactorRequirement(
  transaction: SqlExecutor,
  requesterId: string,
  role: SiteRole,
  current: boolean,
  requested: boolean | null | undefined,
): Promise<void> {
  if (requested === undefined || (requested ?? false) === current) return
  if (role !== 'owner') throw new ApiError('forbidden', "Only the site's owner may require two-factor authentication of its members, or stop requiring it.")
  if (requested === true && !(await createTwoFactorRepository(transaction).isEnabled(requesterId))) {
    throwIfInvalid([
      { field: 'settings.requireTwoFactor', message: 'needs two-factor authentication on your own account first (Account, Two-factor authentication)' },
    ])
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
