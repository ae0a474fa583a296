import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { normalizeSiteInput, settingsChangesOf, validateMergedSettings } from '../../../domain/sites/site-input.js'
import { accountOf, SITE_NOT_FOUND_MESSAGE } from '../../../plugins/authentication.js'
import { ApiError, throwIfInvalid } from '../../../errors.js'
import { createSiteRepository } from '../../../storage/sql/site-repository.js'
import { siteChangesBetween } from '../../../domain/audit/audit-event.js'
import { auditedSiteTransaction, recordSiteAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams, siteChangeErrors } from '../dashboard-schemas.js'
import { documentedBodies, Site, siteView, UpdateSiteBody, SITE_BODY_LIMIT_BYTES } from './site-schemas.js'
import { etagHeader, revisionsAcceptedBy, tagWithRevision } from './site-revision.js'
import { checkTwoFactorRequirement, inputRulesOf, isSameWebhookSecret, openWebhookSecret, sealWebhookSecret } from './site-rules.js'
import { PREVIOUS_WEBHOOK_SECRET_GRACE_MS } from '../../../domain/sites/site.js'

const updateSiteRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.put(
    '/sites/:id',
    {
      bodyLimit: SITE_BODY_LIMIT_BYTES,
      schema: {
        tags: ['dashboard'],
        summary: 'Update a site',
        description:
          'Absent fields keep their values; settings merge key by key and null clears a key (back to its default). ' +
          'The spec\'s body {"settings": {"webhookUrl": ..., "webhookSecret": ...}} sets the webhook. ' +
          `A new webhookSecret replaces the stored one, which keeps signing beside it (a second webhook-signature entry) for ${PREVIOUS_WEBHOOK_SECRET_GRACE_MS / 3_600_000} hours, ` +
          'so that a receiver not yet moved to the new secret keeps verifying: settings.previousWebhookSecretExpiresAt says until when, and null there ends it now. ' +
          'Changes reach every instance within seconds. ' +
          'Reads and writes of a site answer its `ETag`; with `If-Match` set to it, the update is made only if nobody has changed the site since ' +
          '(else 412 `precondition_failed`, and nothing changes), so that two editors of one site do not undo each other\'s changes. ' +
          'A request that changes nothing (every value sent is the one stored, a webhookSecret sent again included) writes nothing: ' +
          'the site is answered with its current ETag and updatedAt, and no audit event is logged, so a configuration can be sent again and again.',
        security: dashboardSecurity,
        params: IdParams,
        headers: Type.Object({
          'if-match': Type.Optional(Type.String({ description: 'The ETag of the site as last read: refuse the update (412) if the site has changed since' })),
        }),
        body: UpdateSiteBody,
        documentedBody: documentedBodies.UpdateSiteBody,
        response: { 200: Site, 400: ErrorResponse, 404: ErrorResponse, 412: ErrorResponse, ...siteChangeErrors, ...authenticatedErrors },
        responseHeaders: { 200: etagHeader },
      },
    },
    async (request, reply) => {
      const { site } = await app.findSite(request, request.params.id, 'manage')
      const { value, issues } = normalizeSiteInput(request.body, inputRulesOf(app))
      throwIfInvalid(issues)
      const settings = value.settings ?? {}
      // Removing the webhook (its URL set to null) removes its secret too, unless the request sets a
      // new one: as an endpoint deleted at Stripe, a URL set again later needs a secret again, and
      // is never signed with one its operator may have forgotten or handed to someone else.
      const secret = settings.webhookSecret === undefined && settings.webhookUrl === null ? null : settings.webhookSecret
      const expectedRevisions = revisionsAcceptedBy(request.headers['if-match'])
      // The merge and the check of the merged result share one transaction: the UPDATE locks the
      // row, so concurrent updates cannot combine into settings that neither would have allowed.
      // The site as the update finds it, locked until the commit (auditedSiteTransaction): the
      // audit log's "before".
      // The role answered is the one read under the site's lock: a transfer that committed while this
      // waited (and made the requester the owner, or the owner an admin) is reflected.
      const { updated, role, isChanged } = await auditedSiteTransaction(app, request, site, 'manage', async (transaction, before, role) => {
        const sites = createSiteRepository(transaction)
        await checkTwoFactorRequirement(transaction, accountOf(request).id, role, before.settings.requireTwoFactor, settings.requireTwoFactor)
        // The stored secret, undefined when it cannot be opened (TOLLGATE_SECRET changed): a new
        // one replaces it then without keeping it, as no delivery could sign with it.
        const stored = typeof secret === 'string' ? openWebhookSecret(app, before) : null
        const replaced = typeof secret === 'string' && !(typeof stored === 'string' && isSameWebhookSecret(stored, secret))
        const changes = {
          name: value.name,
          domains: value.domains === undefined ? undefined : [...value.domains],
          settings: settingsChangesOf(settings),
          // The secret sent again as it is stored changes nothing, and ends no overlap.
          webhookSecretCiphertext: typeof secret === 'string' ? (replaced ? sealWebhookSecret(app, site.id, secret) : undefined) : secret,
          // A new secret keeps the one it replaces signing for a while (as a rotated secret key keeps
          // working), unless the request ends that now; removing the secret or the URL removes it.
          previousWebhookSecretExpiresAt:
            settings.previousWebhookSecretExpiresAt === null || settings.webhookUrl === null
              ? null
              : replaced ? (stored === undefined ? null : new Date(Date.now() + PREVIOUS_WEBHOOK_SECRET_GRACE_MS)) : undefined,
        }
        const result = await sites.update(site.id, changes, expectedRevisions)
        if (result === undefined) {
          if (expectedRevisions !== undefined) throw new ApiError('precondition_failed')
          throw new ApiError('not_found', SITE_NOT_FOUND_MESSAGE)
        }
        throwIfInvalid(validateMergedSettings(result.settings, result.webhookSecretCiphertext !== null))
        // Nothing to change (what is stored already, the same webhook secret included): nothing was
        // written, the revision stays, and there is nothing to audit.
        if (result.revision === before.revision) return { updated: result, role, isChanged: false }
        const changed = siteChangesBetween(before, result, replaced)
        if (changed.length > 0) await recordSiteAudit(transaction, request, { action: 'site.updated', site: result, details: { changes: changed } })
        return { updated: result, role, isChanged: true }
      })
      if (isChanged) await app.siteCache.invalidate(updated)
      tagWithRevision(reply, updated)
      return siteView(updated, role)
    },
  )
}

export default updateSiteRoutes
