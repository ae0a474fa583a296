import type { FastifyPluginAsync } from 'fastify'
import publicGate from '../../plugins/public-gate.js'
import challengeRoutes from './challenge/index.js'
import verifyRoutes from './verify/index.js'

/** The SDK's routes, all behind one gate (site key, CORS, origin check, rate limit). */
const publicApi: FastifyPluginAsync = async (app) => {
  await app.register(publicGate, { rateLimitPerMinute: app.config.rateLimitPerMinute })
  await app.register(challengeRoutes)
  await app.register(verifyRoutes)
}

export default publicApi
