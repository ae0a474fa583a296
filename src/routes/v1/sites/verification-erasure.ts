import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { invalidRequest } from '../../../errors.js'
import { createVerificationQueryRepository } from '../../../storage/sql/verification-query-repository.js'
import { auditedSiteTransaction, recordSiteAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams, siteChangeErrors } from '../dashboard-schemas.js'
import { clientIpsOf, VerificationFilterQuery } from './site-verifications.js'

/**
 * A visitor's rows deleted from a site's log: the erasure a data subject may ask for (GDPR Art. 17),
 * which labels alone could not do. The filters are the listing's, so that GET with the same query
 * shows beforehand exactly what DELETE removes.
 */
const verificationErasureRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.delete(
    '/sites/:id/verifications',
    {
      schema: {
        tags: ['dashboard'],
        summary: "Delete a visitor's rows from the verification log",
        description:
          'Deletes every row of the site\'s log that the filters select: those of a visitor address (clientIp), of a device (device), or, with both, those of the device at that address; ' +
          'at least one is required (400 otherwise). GET /api/v1/sites/{id}/verifications with the same query lists them first. ' +
          "clientIp finds, whatever LOG_CLIENT_IP is now, the rows logged under the address and those logged under its /24 or /48 network, so that rows from before a change of the mode are deleted too (the count includes them). " +
          'For owners and admins; the site\'s audit log records a verifications.deleted event with the filters used and the number of rows, not their values. ' +
          "The stats' counts go down with the rows. A verification of the last second or so may not be in the log yet: repeat the request a few seconds after the visitor's last visit. " +
          'Answers how many rows were deleted (0 when none matched).',
        security: dashboardSecurity,
        params: IdParams,
        querystring: Type.Object({ clientIp: VerificationFilterQuery.clientIp, device: VerificationFilterQuery.device }),
        response: {
          200: Type.Object({ deleted: Type.Integer({ description: 'How many rows were deleted' }) }),
          400: ErrorResponse,
          404: ErrorResponse,
          ...siteChangeErrors,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const { clientIp, device } = request.query
      if (clientIp === undefined && device === undefined) {
        throw invalidRequest([{ field: 'querystring', message: 'must have clientIp or device (or both): whose rows to delete' }])
      }
      const filter = { clientIps: clientIpsOf(clientIp), device: device?.toLowerCase() }
      const { site } = await app.findSite(request, request.params.id, 'manage')
      const deleted = await auditedSiteTransaction(app, request, site, 'manage', async (transaction, locked) => {
        const count = await createVerificationQueryRepository(transaction).deleteMatching(site.id, filter)
        const filters = Object.entries({ clientIp, device }).flatMap(([name, value]) => (value === undefined ? [] : [name]))
        // The values themselves are not recorded: the audit log, kept a year, would keep what was just erased.
        await recordSiteAudit(transaction, request, { action: 'verifications.deleted', site: locked, details: { filters, count } })
        return count
      })
      return { deleted }
    },
  )
}

export default verificationErasureRoutes
