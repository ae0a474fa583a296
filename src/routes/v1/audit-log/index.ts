import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { AUDIT_ACTIONS } from '../../../domain/audit/audit-event.js'
import { isUuid } from '../../../domain/uuid.js'
import { accountOf } from '../../../plugins/authentication.js'
import { createAuditLogRepository } from '../../../storage/sql/audit-log-repository.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse } from '../dashboard-schemas.js'
import { LOG_PAGE_SIZE, logPageQuery, orNull, pageOf, positionOf, rowPosition } from '../log-pages.js'
import { stringEnum } from '../public-schemas.js'
import { invalidRequest } from '../../../errors.js'

const { default: DEFAULT_PAGE_SIZE, maximum: MAX_PAGE_SIZE } = LOG_PAGE_SIZE

const AuditEvent = Type.Object({
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
  }),
  site: orNull(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String({ description: 'Its name at the time' }) })),
  details: Type.Record(Type.String(), Type.Unknown(), {
    description:
      'By action: site.updated has changes, a list of { field, from, to } (for webhookSecret, whether one was set: never the secret; a webhookUrl as its origin and a digest of the rest); ' +
      'site.created has domains and settings (the same list, from the defaults); api_key.created and api_key.revoked have apiKeyId, name and prefix, api_key.created access and expiresAt too (null: never); ' +
      'site.secret_rotated has previousSecretExpiresAt; session.ended has sessionId; sessions.ended_others, account.password_changed and account.password_set have endedSessions; ' +
      'account.recovery_code_used has recoveryCodesLeft; ' +
      'account.login_failed, account.password_check_failed, account.two_factor_asked and account.two_factor_failed are one event an hour with count, firstAt and addresses (its time, address and browser are the latest attempt\'s)',
  }),
})

/** The account's audit log: who changed what, from where, newest first. */
const auditLogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate)
  const auditLog = createAuditLogRepository(app.database)

  app.get(
    '/audit-log',
    {
      schema: {
        tags: ['dashboard'],
        summary: "The account's audit log, newest first",
        description:
          'Log-ins and log-outs (and wrong passwords and codes), password changes, two-factor authentication turned on or off and its recovery codes, sessions ended, ' +
          'API keys made and revoked, and every change to a site, its keys and its webhook, ' +
          `each with who made it (the session or API key), from which address and browser, kept ${app.config.auditRetentionDays === 0 ? 'for ever' : `${app.config.auditRetentionDays} days`} (AUDIT_RETENTION_DAYS). ` +
          "The events of deleted sites stay. Pass nextCursor back as cursor for the next page; it is null on the last page. With an API key, the events' addresses and browsers are left out (null): " +
          'a leaked key must not tell where the account is used from.',
        security: dashboardSecurity,
        querystring: Type.Object({
          ...logPageQuery(DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
          siteId: Type.Optional(Type.String({ description: "Only this site's events (also once the site is deleted)" })),
          action: Type.Optional(stringEnum(AUDIT_ACTIONS, { description: 'Only the events of this action' })),
        }),
        response: {
          200: Type.Object({ items: Type.Array(AuditEvent), nextCursor: orNull(Type.String()) }),
          400: ErrorResponse,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const { siteId, action } = request.query
      if (siteId !== undefined && !isUuid(siteId)) throw invalidRequest([{ field: 'querystring.siteId', message: 'must be a site id (a UUID)' }])
      const limit = request.query.limit ?? DEFAULT_PAGE_SIZE
      const after = positionOf(request.query.cursor)
      const rows = await auditLog.listPage(accountOf(request).id, { limit: limit + 1, siteId: siteId?.toLowerCase(), action, after })
      const { page, nextCursor } = pageOf(rows, limit, rowPosition)
      const isScript = request.authentication?.method !== 'session'
      return {
        items: page.map(({ createdAtMicros: _micros, createdAt, actor, details, ...event }) => {
          const { addresses, ...rest } = details
          return {
            ...event,
            createdAt: createdAt.toISOString(),
            actor: isScript ? { ...actor, clientIp: null, userAgent: null } : actor,
            // Repeated attempts list their addresses: none of them for a script either.
            details: isScript && addresses !== undefined ? rest : details,
          }
        }),
        nextCursor,
      }
    },
  )
}

export default auditLogRoutes
