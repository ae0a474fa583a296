import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { SURGE_MAX_BITS, surgeBits } from '../../../domain/challenge/site-surge.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams } from '../dashboard-schemas.js'

const SurgeStatus = Type.Object({
  threshold: Type.Integer({ description: "The site's surgeChallengesPerMinute; 0 is off (then nothing is counted)" }),
  challengesPerMinute: Type.Integer({ description: 'Challenges the whole fleet issued for the site over the last minute (those of the last second or so of other instances not yet included)' }),
  extraBits: Type.Integer({ minimum: 0, maximum: SURGE_MAX_BITS, description: 'Leading zero bits every challenge of the site gets on top of its own at this rate' }),
  startedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the surge going on began (the surge.started webhook\'s startedAt); null when the site is not in a surge',
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
      const site = await app.findOwnedSite(request, request.params.id)
      const threshold = site.settings.surgeChallengesPerMinute
      const { challengesPerMinute, startedAt } = await app.surge.status(site.id)
      return {
        threshold,
        challengesPerMinute,
        extraBits: surgeBits(challengesPerMinute, threshold),
        startedAt: startedAt?.toISOString() ?? null,
      }
    },
  )
}

export default siteSurgeRoutes
