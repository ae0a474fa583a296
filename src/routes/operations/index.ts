import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { bearerTokenOf, hashToken } from '../../domain/accounts/tokens.js'
import { isSameInConstantTime } from '../../domain/mac.js'
import { ApiError } from '../../errors.js'
import { answersWithin, NoAnswerInTime } from '../../storage/answers-within.js'
import { DependencyRefusal } from '../../storage/dependency-refusal.js'
import { ErrorResponse } from '../v1/dashboard-schemas.js'

const READY_TIMEOUT_MS = 1_000

const DependencyCheck = Type.Object({
  status: Type.Union([Type.Literal('up'), Type.Literal('down')]),
  kind: Type.String({ description: 'postgres or pglite; redis or memory' }),
  latencyMs: Type.Integer(),
  error: Type.Optional(Type.String()),
})

const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  checks: Type.Object({ database: DependencyCheck, redis: DependencyCheck }),
})

async function check(kind: string, ping: () => Promise<void>): Promise<Type.Static<typeof DependencyCheck>> {
  const started = performance.now()
  try {
    await answersWithin(ping(), READY_TIMEOUT_MS)
    return { status: 'up', kind, latencyMs: Math.round(performance.now() - started) }
  } catch (error) {
    // The reason is generic on purpose: connection strings and hosts stay out of the answer. What
    // the store itself said (full, read-only, a refused password, a refused database number) is
    // the operator's to mend and names neither.
    const reason = error instanceof DependencyRefusal || error instanceof NoAnswerInTime ? error.message : 'not reachable'
    return { status: 'down', kind, latencyMs: Math.round(performance.now() - started), error: reason }
  }
}

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
        response: {
          200: Readiness,
          503: Type.Object(Readiness.properties, { description: 'Not ready: this body, with `status` `unavailable` and the checks naming the dependency that does not answer' }),
        },
      },
    },
    async (_request, reply) => {
      const [database, redis] = await Promise.all([
        check(app.database.kind, () => app.database.ping()),
        check(app.keyValue.kind, () => app.keyValue.ping()),
      ])
      const ready = database.status === 'up' && redis.status === 'up'
      void reply.header('cache-control', 'no-store')
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
