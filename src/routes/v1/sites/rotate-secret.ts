import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { PREVIOUS_SECRET_GRACE_MS } from '../../../domain/sites/site-keys.js'
import { SITE_NOT_FOUND_MESSAGE } from '../../../plugins/authentication.js'
import { ApiError } from '../../../errors.js'
import { createSiteRepository } from '../../../storage/sql/site-repository.js'
import { auditedSiteTransaction, recordSiteAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams, siteChangeErrors } from '../dashboard-schemas.js'

const graceHours = PREVIOUS_SECRET_GRACE_MS / 3_600_000

const RotateSecretBody = Type.Union(
  [
    Type.Object(
      {
        invalidateImmediately: Type.Optional(
          Type.Boolean({
            description: `true: the current secret key stops working at once (it leaked). false, the default: it keeps working for ${graceHours} hours beside the new one, so that your backend can move to the new key without failed calls`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'Optional', examples: [{ invalidateImmediately: false }] },
)

/** Rotating a site's secret key, and ending the previous key's grace period early. */
const rotateSecretRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const notFound = () => new ApiError('not_found', SITE_NOT_FOUND_MESSAGE)

  app.post(
    '/sites/:id/secret/rotate',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Replace the secret key (answers the new one once)',
        description: `Siteverify accepts the replaced key for ${graceHours} more hours unless invalidateImmediately is true (then it stops at once). Rotating again within the grace period keeps the key the rotation before replaced working until its own grace period ends (two replaced keys at most: a third rotation stops the oldest); invalidateImmediately stops every replaced key.`,
        security: dashboardSecurity,
        params: IdParams,
        body: RotateSecretBody,
        // A POST without a body keeps the grace period (documented as an optional request body).
        optionalBody: true,
        response: {
          200: Type.Object({
            secretKey: Type.String({ description: 'For Siteverify; shown only in this answer' }),
            previousSecretExpiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
              description: 'Until when the replaced key still works; null when it stopped at once',
            }),
          }),
          400: ErrorResponse,
          404: ErrorResponse,
          ...siteChangeErrors, ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const { site } = await app.findSite(request, request.params.id, 'manage')
      const previousValidUntil = request.body?.invalidateImmediately === true ? null : new Date(Date.now() + PREVIOUS_SECRET_GRACE_MS)
      const secretKey = await auditedSiteTransaction(app, request, site, 'manage', async (transaction, locked) => {
        const key = await createSiteRepository(transaction).rotateSecret(site.id, previousValidUntil)
        if (key === undefined) throw notFound()
        await recordSiteAudit(transaction, request, { action: 'site.secret_rotated', site: locked, details: { previousSecretExpiresAt: previousValidUntil?.toISOString() ?? null } })
        return key
      })
      await app.siteCache.invalidate(site)
      return { secretKey, previousSecretExpiresAt: previousValidUntil?.toISOString() ?? null }
    },
  )

  app.delete(
    '/sites/:id/secret/previous',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Stop accepting the secret keys replaced by rotations now',
        description: 'Ends their grace periods early; answers 204 also when no replaced key works any more.',
        security: dashboardSecurity,
        params: IdParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...siteChangeErrors, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { site } = await app.findSite(request, request.params.id, 'manage')
      await auditedSiteTransaction(app, request, site, 'manage', async (transaction, locked) => {
        if (!(await createSiteRepository(transaction).endPreviousSecret(site.id))) throw notFound()
        await recordSiteAudit(transaction, request, { action: 'site.previous_secrets_ended', site: locked })
      })
      await app.siteCache.invalidate(site)
      return reply.code(204).send(null)
    },
  )
}

export default rotateSecretRoutes
