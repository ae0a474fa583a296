import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { normalizeSiteInput, settingsChangesOf, validateMergedSettings } from '../../../domain/sites/site-input.js'
import { ApiError, throwIfInvalid } from '../../../errors.js'
import { createSiteRepository } from '../../../storage/sql/site-repository.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams } from '../dashboard-schemas.js'
import { Site, siteView, UpdateSiteBody } from './site-schemas.js'
import { inputRulesOf, sealWebhookSecret } from './site-rules.js'

const updateSiteRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.put(
    '/sites/:id',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Update a site',
        description:
          'Absent fields keep their values; settings merge key by key and null clears a key (back to its default). ' +
          'The spec\'s body {"settings": {"webhookUrl": ..., "webhookSecret": ...}} sets the webhook. ' +
          'Changes reach every instance within seconds.',
        security: dashboardSecurity,
        params: IdParams,
        body: UpdateSiteBody,
        response: { 200: Site, 400: ErrorResponse, 404: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request) => {
      const site = await app.findOwnedSite(request, request.params.id)
      const { value, issues } = normalizeSiteInput(request.body, inputRulesOf(app))
      throwIfInvalid(issues)
      const settings = value.settings ?? {}
      const secret = settings.webhookSecret
      // The merge and the check of the merged result share one transaction: the UPDATE locks the
      // row, so concurrent updates cannot combine into settings that neither would have allowed.
      const updated = await app.database.transaction(async (transaction) => {
        const result = await createSiteRepository(transaction).update(site.id, {
          name: value.name,
          domains: value.domains === undefined ? undefined : [...value.domains],
          settings: settingsChangesOf(settings),
          webhookSecretCiphertext: secret === undefined || secret === null ? secret : sealWebhookSecret(app, site.id, secret),
        })
        if (result === undefined) throw new ApiError('not_found', 'There is no site with this id in your account.')
        throwIfInvalid(validateMergedSettings(result.settings, result.webhookSecretCiphertext !== null))
        return result
      })
      await app.siteCache.invalidate(updated)
      return siteView(updated)
    },
  )
}

export default updateSiteRoutes
