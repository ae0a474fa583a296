import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ApiError } from '../../../errors.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams } from '../dashboard-schemas.js'

const rotateSecretRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/sites/:id/secret/rotate',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Replace the secret key (answers the new one once)',
        description: 'The old secret key stops working at once.',
        security: dashboardSecurity,
        params: IdParams,
        response: {
          200: Type.Object({ secretKey: Type.String({ description: 'For Siteverify; shown only in this answer' }) }),
          404: ErrorResponse,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const site = await app.findOwnedSite(request, request.params.id)
      const secretKey = await app.sites.rotateSecret(site.id)
      if (secretKey === undefined) throw new ApiError('not_found', 'There is no site with this id in your account.')
      await app.siteCache.invalidate(site)
      return { secretKey }
    },
  )
}

export default rotateSecretRoutes
