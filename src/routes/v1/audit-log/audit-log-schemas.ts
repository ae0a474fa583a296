import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { AUDIT_ACTIONS, type AuditAction } from '../../../domain/audit/audit-event.js'
import { isUuid } from '../../../domain/uuid.js'
import { invalidRequest } from '../../../errors.js'
import type { AuditEventRecord } from '../../../storage/sql/audit-log-repository.js'
import { orNull } from '../log-pages.js'
import { named } from '../named-schemas.js'
import { stringEnum } from '../public-schemas.js'

export const AuditEvent = named('AuditEvent', Type.Object({
  id: Type.String({ format: 'uuid' }),
  createdAt: Type.String({ format: 'date-time' }),
  action: stringEnum(AUDIT_ACTIONS, { description: 'What happened, by a code that never changes meaning (docs/audit-log.md); show a code you do not know as it is' }),
  actor: Type.Object({
    type: stringEnum(['session', 'api-key', 'operator', 'anonymous'] as const, {
      description: 'session: the dashboard, logged in; api-key: a script with an API key; operator: `npm run account` on the server; anonymous: a failed log-in or a sign-up',
    }),
    id: orNull(Type.String({ format: 'uuid', description: "The session's or API key's id" })),
    name: orNull(Type.String({ description: "The account's e-mail address for a session, the key's name for an API key" })),
    keyPrefix: orNull(Type.String({ description: "The API key's prefix" })),
    clientIp: orNull(Type.String({ description: 'The address the request came from; null when an API key reads the log' })),
    userAgent: orNull(Type.String({ description: 'The User-Agent it sent (up to 512 characters); null when an API key reads the log' })),
    accountId: orNull(Type.String({ format: 'uuid', description: "The account whose session or API key acted (null for the other actors, and for events written before this field)" })),
    email: orNull(Type.String({ description: "That account's e-mail address at the time: whose API key it was, whatever the key's name says" })),
  }),
  site: orNull(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String({ description: 'Its name at the time' }) })),
  details: Type.Record(Type.String(), Type.Unknown(), {
    description:
      'By action: site.updated has changes, a list of { field, from, to } (for webhookSecret, whether one was set: never the secret; for previousWebhookSecret, until when the replaced secret signs beside it, null for no more; a webhookUrl as its origin and a digest of the rest); ' +
      'site.created has domains and settings (the same list, from the defaults); api_key.created and api_key.revoked have apiKeyId, name and prefix, api_key.created access, siteIds (null: all sites), allowedAddresses (null: any address) and expiresAt (null: never) too; api_key.updated has apiKeyId, name and prefix (after the edit) and changes, a list of { field, from, to } (name, access, siteIds, allowedAddresses, expiresAt); ' +
      'site.secret_rotated has previousSecretExpiresAt; session.ended has sessionId; sessions.ended_others, account.password_changed, account.password_set, account.disabled and account.sessions_ended have endedSessions; ' +
      'site.invitation_revoked has invitationId, role and email, and for an invitation revoked with its inviter (removed, left, made a viewer or disabled by the operator) invitedBy and reason (member_removed, member_left, made_viewer, inviter_disabled); ' +
      'account.recovery_code_used has recoveryCodesLeft; ' +
      "verifications.deleted (a visitor's rows erased) has filters (which of clientIp and device selected the rows, never their values) and count (rows deleted); " +
      'account.login_failed, account.password_check_failed, account.two_factor_asked, account.two_factor_failed, account.passkey_refused and api_key.address_refused are one event an hour with count, firstAt and addresses (its time, address and browser are the latest attempt\'s); ' +
      "account.passkey_refused and api_key.address_refused keep the first attempt's details and list each distinct one of the hour in variants (at most 20)",
  }),
}))

/** The filters of the audit log's query, its listing's and its export's alike. */
export const auditLogFilters = {
  siteId: Type.Optional(Type.String({ description: "Only this site's events (also once the site is deleted)" })),
  action: Type.Optional(stringEnum(AUDIT_ACTIONS, { description: 'Only the events of this action' })),
}

/** The filters a query names; 400 validation_error for a siteId that is not a UUID. */
export function auditLogFilterOf(query: { siteId?: string; action?: AuditAction }): { siteId?: string; action?: AuditAction } {
  const { siteId, action } = query
  if (siteId !== undefined && !isUuid(siteId)) throw invalidRequest([{ field: 'querystring.siteId', message: 'must be a site id (a UUID)' }])
  return { siteId: siteId?.toLowerCase(), action }
}

/**
 * An event as `request` may read it: with an API key, without the addresses and browsers (the
 * actor's, and the addresses of repeated attempts), which a leaked key must not tell.
 */
export function auditEventViewFor(request: FastifyRequest) {
  const isScript = request.authentication?.method !== 'session'
  return ({ createdAtMicros: _micros, createdAt, actor, details, ...event }: AuditEventRecord) => {
    const { addresses, ...rest } = details
    return {
      ...event,
      createdAt: createdAt.toISOString(),
      actor: isScript ? { ...actor, clientIp: null, userAgent: null } : actor,
      // Repeated attempts list their addresses: none of them for a script either.
      details: isScript && addresses !== undefined ? rest : details,
    }
  }
}
