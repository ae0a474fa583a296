import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { accountOf, reachesSite, siteScopeOf } from '../../../plugins/authentication.js'
import { createAuditLogRepository } from '../../../storage/sql/audit-log-repository.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse } from '../dashboard-schemas.js'
import { LOG_PAGE_SIZE, logPageQuery, orNull, pageOf, positionOf, rowPosition } from '../log-pages.js'
import auditLogExportRoutes from './audit-log-export.js'
import { AuditEvent, auditEventViewFor, auditLogFilterOf, auditLogFilters } from './audit-log-schemas.js'

const { default: DEFAULT_PAGE_SIZE, maximum: MAX_PAGE_SIZE } = LOG_PAGE_SIZE

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
          'a leaked key must not tell where the account is used from. With an API key made for some sites only (siteIds), the events of those sites only ' +
          "(of each, whether the account still reaches it or not): none of the account's own, such as log-ins.",
        security: dashboardSecurity,
        querystring: Type.Object({
          ...logPageQuery(DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
          ...auditLogFilters,
        }),
        response: {
          200: Type.Object({ items: Type.Array(AuditEvent), nextCursor: orNull(Type.String()) }),
          400: ErrorResponse,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? DEFAULT_PAGE_SIZE
      const after = positionOf(request.query.cursor)
      const rows = await auditLog.listPage(accountOf(request).id, { limit: limit + 1, ...auditLogFilterOf(request.query), siteIds: siteScopeOf(request), after })
      const { page, nextCursor } = pageOf(rows, limit, rowPosition)
      return { items: page.map(auditEventViewFor(request)), nextCursor }
    },
  )
  app.get(
    '/audit-log/sites',
    {
      schema: {
        tags: ['dashboard'],
        summary: "The sites the account's audit log has events of",
        description:
          'Each once, as its newest event names it: those deleted, transferred away or no longer shared included, which GET /sites no longer lists ' +
          "but whose events siteId still finds. deleted: that newest event is the site's deletion. In no order. " +
          'With an API key made for some sites only (siteIds), those of its sites only.',
        security: dashboardSecurity,
        response: {
          200: Type.Object({
            items: Type.Array(
              Type.Object({
                id: Type.String({ format: 'uuid' }),
                name: Type.String({ description: 'The name its newest event recorded' }),
                deleted: Type.Boolean({ description: 'Its newest event is its deletion' }),
              }),
            ),
          }),
          ...authenticatedErrors,
        },
      },
    },
    async (request) => ({ items: (await auditLog.sitesOf(accountOf(request).id)).filter((site) => reachesSite(request, site.id)) }),
  )
  await app.register(auditLogExportRoutes)
}

export default auditLogRoutes
