import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { SURGE_MAX_BITS, surgeBits } from '../../../domain/challenge/site-surge.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams } from '../dashboard-schemas.js'

const SurgeStatus = Type.Object({
  threshold: Type.Integer({ description: "The site's surgeChallengesPerMinute; 0 is off (then no challenge is counted)" }),
  challengesPerMinute: Type.Integer({ description: 'Challenges the whole fleet issued for the site over the last minute (those of the last second or so of other instances not yet included)' }),
  extraBits: Type.Integer({
    minimum: 0,
    maximum: SURGE_MAX_BITS,
    description: 'Leading zero bits a challenge of the site issued now gets for the surge, on top of its own (the total is at most 32)',
  }),
  startedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      "When the surge going on began (the surge.started webhook's startedAt); null when the site is not in a surge. " +
      'A surge lasts until the rate has stayed under the threshold for 3 minutes, also when the threshold was set to 0 meanwhile',
  }),
})

/** A site's surge protection as it stands now (docs/risk.md, "Surge protection"). */
const siteSurgeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/sites/:id/surge',
    {
      schema: {
        tags: ['dashboard'],
        summary: "The site's challenge rate now, against its surge threshold, and the surge going on if any",
        security: dashboardSecurity,
        params: IdParams,
        response: { 200: SurgeStatus, 404: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request) => {
      const { site } = await app.findSite(request, request.params.id, 'read')
      const threshold = site.settings.surgeChallengesPerMinute
      const { challengesPerMinute, startedAt } = await app.surge.status(site.id)
      return {
        threshold,
        challengesPerMinute,
        // As the challenge route reckons it: the challenge issued now counts itself.
        extraBits: surgeBits(challengesPerMinute + 1, threshold),
        startedAt: startedAt?.toISOString() ?? null,
      }
    },
  )
}

export default siteSurgeRoutes
