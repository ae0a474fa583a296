import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { exportFileName } from '../../../domain/export/export-filename.js'
import { accountOf, siteScopeOf } from '../../../plugins/authentication.js'
import { createAuditLogRepository } from '../../../storage/sql/audit-log-repository.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse } from '../dashboard-schemas.js'
import { exportQuery, exportRangeOf, exportResponse, sendLogExport, type CsvColumn } from '../log-export.js'
import { rowPosition } from '../log-pages.js'
import { auditEventViewFor, auditLogFilterOf, auditLogFilters } from './audit-log-schemas.js'

type AuditEventView = ReturnType<ReturnType<typeof auditEventViewFor>>

/** The CSV's columns: an event's fields, the actor's and the site's flattened; details as JSON. */
const columns: readonly CsvColumn<AuditEventView>[] = [
  ['id', (event) => event.id],
  ['createdAt', (event) => event.createdAt],
  ['action', (event) => event.action],
  ['actorType', (event) => event.actor.type],
  ['actorId', (event) => event.actor.id],
  ['actorName', (event) => event.actor.name],
  ['actorKeyPrefix', (event) => event.actor.keyPrefix],
  ['clientIp', (event) => event.actor.clientIp],
  ['userAgent', (event) => event.actor.userAgent],
  ['siteId', (event) => event.site?.id ?? null],
  ['siteName', (event) => event.site?.name ?? null],
  ['details', (event) => JSON.stringify(event.details)],
  // Added after the others (migration 037), so that a reader of the columns by position reads them as before.
  ['actorAccountId', (event) => event.actor.accountId],
  ['actorEmail', (event) => event.actor.email],
]

const auditLogExportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const auditLog = createAuditLogRepository(app.database)

  app.get(
    '/audit-log/export',
    {
      // A HEAD would read the whole log to answer nothing, without the stream's backpressure.
      exposeHeadRoute: false,
      schema: {
        tags: ['dashboard'],
        summary: "The account's audit log as a file (CSV or NDJSON), newest first",
        description:
          'Every event that the filters and the range select (from <= createdAt < to), newest first, streamed as a download. ' +
          `CSV columns: ${columns.map(([header]) => header).join(', ')} (details as JSON). ` +
          "A cell that begins with =, +, -, @, a tab or a carriage return, after any spaces, gets a leading ' (a user agent or a site's name must not run as a spreadsheet formula); " +
          'a cell with a comma, a semicolon, a quote or a line break is quoted. ' +
          "NDJSON lines are the listing's items. With an API key, the addresses and browsers are left out, as the listing leaves them out; " +
          'with one made for some sites only, the events of those sites only, as the listing keeps to them. ' +
          'from and to take at most milliseconds. The file is not a snapshot: each batch reads the log as it is then, and a repeated event moves its ' +
          'createdAt to its latest attempt, so one repeated during the download may be missing. At most 2 exports per account run at once (429 rate_limited). ' +
          'A failure mid-download resets the connection: the transfer fails rather than ending at a clean line.',
        security: dashboardSecurity,
        querystring: Type.Object({ ...exportQuery, ...auditLogFilters }),
        response: { 200: exportResponse, 400: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request).id
      const filter = { ...exportRangeOf(request.query), ...auditLogFilterOf(request.query), siteIds: siteScopeOf(request) }
      const format = request.query.format ?? 'csv'
      return sendLogExport(reply, {
        format,
        fileName: exportFileName(['audit-log'], format, new Date()),
        readPage: (page) => auditLog.listPage(accountId, { ...filter, ...page }),
        positionOf: rowPosition,
        viewOf: auditEventViewFor(request),
        columns,
      })
    },
  )
}

export default auditLogExportRoutes
