import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import accountsRoutes from './accounts/index.js'
import apiKeysRoutes from './api-keys/index.js'
import meRoutes from './me/index.js'
import sessionsRoutes from './sessions/index.js'
import sitesRoutes from './sites/index.js'

/** The dashboard API of DESIGN section 3, mounted under /api/v1 (needs the authentication plugin). */
const dashboardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(accountsRoutes, { prefix: '/api/v1' })
  await app.register(sessionsRoutes, { prefix: '/api/v1' })
  await app.register(meRoutes, { prefix: '/api/v1' })
  await app.register(apiKeysRoutes, { prefix: '/api/v1' })
  await app.register(sitesRoutes, { prefix: '/api/v1' })
}

export default dashboardRoutes
