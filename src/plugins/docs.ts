import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * The OpenAPI document is generated from the route schemas. It must be registered before the
 * routes so that it sees them. Outside production /docs serves Swagger UI and /docs/json the
 * document; in production neither route exists (404).
 */
async function docsPlugin(app: FastifyInstance, options: { exposeUi: boolean }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Tollgate',
        description: 'Self-hosted bot protection: proof-of-work challenges, risk scores, signed tokens, Siteverify.',
        version: '1',
      },
      components: {
        securitySchemes: {
          siteKey: { type: 'apiKey', in: 'header', name: 'X-Site-Key' },
          bearer: { type: 'http', scheme: 'bearer', description: 'A dashboard API key' },
          session: { type: 'apiKey', in: 'cookie', name: 'tollgate_session' },
        },
      },
    },
  })
  if (options.exposeUi) {
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } })
  }
}

export default fp(docsPlugin, { name: 'docs' })
