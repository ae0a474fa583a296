import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import manageSitesRoutes from './manage-sites.js'
import rotateSecretRoutes from './rotate-secret.js'
import siteInvitationsRoutes from './site-invitations.js'
import siteMembersRoutes from './site-members.js'
import siteStatsRoutes from './site-stats.js'
import siteSurgeRoutes from './site-surge.js'
import siteVerificationsRoutes from './site-verifications.js'
import siteVerificationsExportRoutes from './site-verifications-export.js'
import transferOwnershipRoutes from './transfer-ownership.js'
import updateSiteRoutes from './update-site.js'
import verificationErasureRoutes from './verification-erasure.js'
import verificationLabelRoutes from './verification-label.js'

/** Every site route requires an account; authentication runs first, so 401 precedes any 400. */
const sitesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate)
  await app.register(manageSitesRoutes)
  await app.register(updateSiteRoutes)
  await app.register(rotateSecretRoutes)
  await app.register(siteStatsRoutes)
  await app.register(siteSurgeRoutes)
  await app.register(siteVerificationsRoutes)
  await app.register(siteVerificationsExportRoutes)
  await app.register(siteMembersRoutes)
  await app.register(siteInvitationsRoutes)
  await app.register(transferOwnershipRoutes)
  await app.register(verificationLabelRoutes)
  await app.register(verificationErasureRoutes)
}

export default sitesRoutes
