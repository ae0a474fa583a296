import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { decodeLogCursor, encodeLogCursor } from '../../../domain/analytics/log-cursor.js'
import { statsActions } from '../../../domain/analytics/stats-range.js'
import { createVerificationQueryRepository, type LogEntry } from '../../../storage/sql/verification-query-repository.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams } from '../dashboard-schemas.js'
import { invalidRequest } from './site-rules.js'

const DEFAULT_PAGE_SIZE = 50
const MAX_PAGE_SIZE = 200

const nullable = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()])

const Verification = Type.Object({
  id: Type.String({ format: 'uuid' }),
  createdAt: Type.String({ format: 'date-time' }),
  action: Type.String({ description: 'allow, challenge, block, or rejected (refused before scoring; see errorCode)' }),
  errorCode: nullable(Type.String()),
  riskScore: nullable(Type.Integer()),
  anomalies: Type.Array(Type.String()),
  countryCode: nullable(Type.String()),
  clientIp: nullable(Type.String()),
  hostname: nullable(Type.String()),
  userAgent: nullable(Type.String()),
  difficulty: nullable(Type.Integer()),
  solveTimeMs: nullable(Type.Integer()),
})

function verificationView({ createdAtMicros: _micros, createdAt, ...entry }: LogEntry): Type.Static<typeof Verification> {
  return { ...entry, createdAt: createdAt.toISOString() }
}

const siteVerificationsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const verifications = createVerificationQueryRepository(app.database)

  app.get(
    '/sites/:id/verifications',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'The verification log, newest first',
        description: 'Pass nextCursor back as cursor for the next page; it is null on the last page.',
        security: dashboardSecurity,
        params: IdParams,
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })),
          cursor: Type.Optional(Type.String({ maxLength: 200 })),
          action: Type.Optional(Type.Union(statsActions.map((action) => Type.Literal(action)))),
        }),
        response: {
          200: Type.Object({ items: Type.Array(Verification), nextCursor: nullable(Type.String()) }),
          400: ErrorResponse,
          404: ErrorResponse,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const site = await app.findOwnedSite(request, request.params.id)
      const { cursor, action } = request.query
      const limit = request.query.limit ?? DEFAULT_PAGE_SIZE
      const after = cursor === undefined ? undefined : decodeLogCursor(cursor)
      if (cursor !== undefined && after === undefined) {
        throw invalidRequest([{ field: 'querystring.cursor', message: 'is not a cursor this service issued; pass nextCursor back unchanged' }])
      }
      // One row more than asked tells whether another page exists without a count.
      const rows = await verifications.listPage(site.id, { limit: limit + 1, action, after })
      const page = rows.slice(0, limit)
      const last = page.at(-1)
      return {
        items: page.map(verificationView),
        nextCursor: rows.length > limit && last !== undefined ? encodeLogCursor({ createdAtMicros: last.createdAtMicros, id: last.id }) : null,
      }
    },
  )
}

export default siteVerificationsRoutes
