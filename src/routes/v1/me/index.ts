import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ApiError } from '../../../errors.js'
import { accountOf } from '../../../plugins/authentication.js'
import { Account, authenticatedErrors, dashboardSecurity } from '../dashboard-schemas.js'

const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/me',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['dashboard'],
        summary: 'The account of the session or API key',
        security: dashboardSecurity,
        response: { 200: Account, ...authenticatedErrors },
      },
    },
    async (request) => {
      const account = await app.accounts.findById(accountOf(request).id)
      if (account === undefined) throw new ApiError('unauthorized')
      return { id: account.id, email: account.email, createdAt: account.createdAt.toISOString() }
    },
  )
}

export default meRoutes
