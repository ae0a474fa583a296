import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { bearerTokenOf, hashToken } from '../../domain/accounts/tokens.js'
import { isSameInConstantTime } from '../../domain/mac.js'
import { ApiError } from '../../errors.js'
import { checkDependency } from '../../storage/dependency-check.js'
import { ErrorResponse } from '../v1/dashboard-schemas.js'

const DependencyCheck = Type.Object({
  status: Type.Union([Type.Literal('up'), Type.Literal('down')]),
  kind: Type.String({ description: 'postgres or pglite; redis or memory' }),
  latencyMs: Type.Integer(),
  error: Type.Optional(Type.String()),
})

const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable'), Type.Literal('draining')], {
    description: 'draining: the instance is stopping (SHUTDOWN_DELAY) and still answers, but takes no new work from a load balancer',
  }),
  checks: Type.Object({ database: DependencyCheck, redis: DependencyCheck }),
})

const operationsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/health',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness: always 200 while the process serves requests',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
        cannotFail: true,
      },
    },
    async () => ({ status: 'ok' as const }),
  )

  app.get(
    '/ready',
    {
      schema: {
        tags: ['operations'],
        summary: 'Readiness: 200 when the database and Redis answer and take writes, else 503',
        description: 'Also 503, with `status` `draining`, from SIGTERM until the listener closes (SHUTDOWN_DELAY): a load balancer stops sending new requests while those it sends are still answered.',
        response: {
          200: Readiness,
          503: Type.Object(Readiness.properties, {
            description: 'Not ready: this body, with `status` `unavailable` and the checks naming the dependency that does not answer, or `draining` while the instance stops',
          }),
        },
      },
    },
    async (_request, reply) => {
      const [database, redis] = await Promise.all([
        checkDependency(app.database.kind, () => app.database.ping()),
        checkDependency(app.keyValue.kind, () => app.keyValue.ping()),
      ])
      const ready = database.status === 'up' && redis.status === 'up'
      void reply.header('cache-control', 'no-store')
      if (app.isDraining()) return reply.code(503).send({ status: 'draining' as const, checks: { database, redis } })
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks: { database, redis } })
    },
  )

  const digest = (token: string) => Buffer.from(hashToken(token), 'hex')
  const metricsToken = app.config.metricsToken === undefined ? undefined : digest(app.config.metricsToken)
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['operations'],
        summary: 'Prometheus metrics (text exposition format)',
        description: 'Open to anyone unless METRICS_TOKEN is set; then only with Authorization: Bearer and that token.',
        security: [{}, { metricsToken: [] }],
        response: {
          200: { description: 'The metrics', content: { 'text/plain': { schema: Type.String() } } },
          401: ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      if (metricsToken !== undefined && !isSameInConstantTime(metricsToken, digest(bearerTokenOf(request.headers.authorization) ?? ''))) {
        throw new ApiError('unauthorized', 'Send the METRICS_TOKEN as Authorization: Bearer <token>.', undefined, { 'www-authenticate': 'Bearer' })
      }
      const body = await app.metrics.registry.metrics()
      return reply.header('content-type', app.metrics.registry.contentType).send(body)
    },
  )
}

export default operationsRoutes
