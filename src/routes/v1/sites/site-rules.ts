import type { FastifyInstance } from 'fastify'
import { encryptSecret } from '../../../domain/secret-box.js'
import type { FieldIssue, InputRules } from '../../../domain/sites/site-input.js'
import { ApiError } from '../../../errors.js'

/** Webhooks in production, or wherever private targets are refused, must use https; and name no address deliveries are refused at. */
export function inputRulesOf(app: FastifyInstance): InputRules {
  return {
    isHttpsRequired: app.config.environment === 'production' || !app.config.allowPrivateWebhooks,
    allowPrivateWebhooks: app.config.allowPrivateWebhooks,
  }
}

export function invalidRequest(issues: FieldIssue[]): ApiError {
  return new ApiError('validation_error', 'The request is not valid; see details.', issues)
}

export function throwIfInvalid(issues: FieldIssue[]): void {
  if (issues.length > 0) throw invalidRequest(issues)
}

/** The stored form of a webhook secret, bound to its site so it cannot be moved to another row. */
export function sealWebhookSecret(app: FastifyInstance, siteId: string, secret: string): string {
  return encryptSecret(app.keyRing.keyFor('webhook-encryption'), secret, siteId)
}
