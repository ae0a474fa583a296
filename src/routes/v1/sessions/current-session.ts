import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ApiError } from '../../../errors.js'
import { accountOf, namesApiKey, sessionCookieName, sessionIdOf } from '../../../plugins/authentication.js'
import { Account, authenticatedErrors } from '../dashboard-schemas.js'

const CurrentSession = Type.Object({
  account: Type.Union([Account, Type.Null()], {
    description: 'The account the session cookie is logged in to; null without a live session (no cookie, or one that expired or was logged out)',
  }),
})

/**
 * Whether this browser is logged in, which the dashboard asks first. GET /api/v1/me answers 401 to
 * a browser that is not, and browsers log each 401 a page's fetch gets as an error in its console:
 * the dashboard opened logged out showed one. Here, not being logged in is an answer, not a refusal.
 */
const currentSessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/sessions/current',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Whether this browser is logged in, and to which account',
        description:
          `The account of the session cookie ${sessionCookieName(app.config)}, or {"account": null} without a live session (no cookie, or one that ` +
          'expired or was logged out): 200 either way, where GET /api/v1/me answers 401, so that a page asking whether it is logged in ' +
          'makes the browser log no failed request. An API key is no session: 403 forbidden with one (401 for an unknown key).',
        security: [{ session: [] }, {}],
        sessionOnly: 'ask whether it is logged in',
        response: { 200: CurrentSession, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      try {
        await app.authenticate(request, reply)
      } catch (error) {
        // A script's API key is judged as on every route; a browser without a session is told so.
        if (error instanceof ApiError && error.code === 'unauthorized' && !namesApiKey(request.headers.authorization)) return { account: null }
        throw error
      }
      sessionIdOf(request)
      const account = await app.accounts.findById(accountOf(request).id)
      // Deleted since the session was read: its sessions went with it.
      if (account === undefined) return { account: null }
      return { account: { id: account.id, email: account.email, createdAt: account.createdAt.toISOString() } }
    },
  )
}

export default currentSessionRoutes
