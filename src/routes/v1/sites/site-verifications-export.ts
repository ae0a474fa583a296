import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { exportFileName, fileNameSlug } from '../../../domain/export/export-filename.js'
import { createVerificationQueryRepository } from '../../../storage/sql/verification-query-repository.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams } from '../dashboard-schemas.js'
import { exportQuery, exportRangeOf, exportResponse, fieldColumns, sendLogExport } from '../log-export.js'
import { rowPosition } from '../log-pages.js'
import { Verification, VerificationFilterQuery, verificationFilterOf, verificationView } from './site-verifications.js'

/** The CSV's columns: the listing's fields, in its order. */
const columns = fieldColumns(Object.keys(Verification.properties) as (keyof typeof Verification.properties)[])

const siteVerificationsExportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const verifications = createVerificationQueryRepository(app.database)

  app.get(
    '/sites/:id/verifications/export',
    {
      // A HEAD would read the whole log to answer nothing, without the stream's backpressure.
      exposeHeadRoute: false,
      schema: {
        tags: ['dashboard'],
        summary: 'The verification log as a file (CSV or NDJSON), newest first',
        description:
          'Every row of the log that the filters and the range select (from <= createdAt < to), newest first, streamed as a download. ' +
          `CSV columns: ${columns.map(([header]) => header).join(', ')} (anomalies joined by ;). ` +
          "A cell that begins with =, +, -, @, a tab or a carriage return, after any spaces, gets a leading ' (what a visitor sent must not run as a spreadsheet formula); " +
          'a cell with a comma, a semicolon, a quote or a line break is quoted. ' +
          "NDJSON lines are the listing's items. from and to take at most milliseconds. The file is not a snapshot: each batch reads the log as it is then. " +
          'The log is written up to a second after a verification, with its own time, so rows of the last seconds may be missing; ' +
          'a to a few seconds in the past gives a range that no longer changes. At most 2 exports per account run at once (429 rate_limited). ' +
          'A failure mid-download resets the connection: the transfer fails rather than ending at a clean line.',
        security: dashboardSecurity,
        params: IdParams,
        querystring: Type.Object({
          ...exportQuery,
          ...VerificationFilterQuery,
        }),
        response: { 200: exportResponse, 400: ErrorResponse, 404: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { site } = await app.findSite(request, request.params.id, 'read')
      const format = request.query.format ?? 'csv'
      const filter = { ...exportRangeOf(request.query), ...verificationFilterOf(request.query) }
      return sendLogExport(reply, {
        format,
        fileName: exportFileName([fileNameSlug(site.name, site.id), 'verifications'], format, new Date()),
        readPage: (page) => verifications.listPage(site.id, { ...filter, ...page }),
        positionOf: rowPosition,
        viewOf: verificationView,
        columns,
      })
    },
  )
}

export default siteVerificationsExportRoutes
