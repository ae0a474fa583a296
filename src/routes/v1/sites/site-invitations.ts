import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { EMAIL_MAX_LENGTH, isEmailAddress, normalizeEmailAddress } from '../../../domain/accounts/email-address.js'
import { generateInvitationToken, hashToken } from '../../../domain/accounts/tokens.js'
import { INVITATION_LIFETIME_MS, MAX_PENDING_INVITATIONS_PER_SITE } from '../../../domain/sites/site-roles.js'
import { isUuid } from '../../../domain/uuid.js'
import { ApiError, invalidRequest } from '../../../errors.js'
import { accountOf, expectedOrigin } from '../../../plugins/authentication.js'
import { createSiteInvitationRepository } from '../../../storage/sql/site-invitation-repository.js'
import { auditedSiteTransaction, recordSiteAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams, siteChangeErrors } from '../dashboard-schemas.js'
import { Invitation, invitationProperties, invitationView, MemberRoleSchema } from './member-schemas.js'

const CreatedInvitation = Type.Object({
  ...invitationProperties,
  token: Type.String({ description: 'The one-time token (tgi_...): shown only in this answer, stored only as a digest' }),
  url: Type.String({ description: 'The link to send the invitee: the dashboard page that accepts it, the token after # (never sent to a server, so no log or Referer keeps it)' }),
})

const InvitationParams = Type.Object({ id: Type.String({ description: "The site's UUID" }), invitationId: Type.String({ description: "The invitation's UUID" }) })

/**
 * Invitations to share a site, made by its owner and admins. No e-mail is sent (the service has
 * no mail): the answer holds the link, shown once, for the inviter to pass on.
 */
const siteInvitationsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const invitations = createSiteInvitationRepository(app.database)

  app.post(
    '/sites/:id/invitations',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Invite an account to the site (answers the link once)',
        description:
          'By the owner or an admin. The link can be accepted once, by any account (or, with email, only by the account with that address), ' +
          `for 7 days. A site has at most ${MAX_PENDING_INVITATIONS_PER_SITE} pending invitations (409 conflict beyond).`,
        security: dashboardSecurity,
        params: IdParams,
        body: Type.Object(
          {
            role: MemberRoleSchema,
            email: Type.Optional(Type.String({ maxLength: 1000, description: 'Only the account with this e-mail address may accept' })),
          },
          { additionalProperties: false, examples: [{ role: 'viewer', email: 'colleague@example.com' }] },
        ),
        response: { 201: CreatedInvitation, 400: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { site } = await app.findSite(request, request.params.id, 'manage')
      const email = request.body.email === undefined ? null : normalizeEmailAddress(request.body.email)
      if (email !== null && (email.length > EMAIL_MAX_LENGTH || !isEmailAddress(email))) {
        throw invalidRequest([{ field: 'email', message: 'must be an e-mail address' }])
      }
      const token = generateInvitationToken()
      const invitation = await auditedSiteTransaction(app, request, site, 'manage', async (transaction, locked) => {
        const created = await createSiteInvitationRepository(transaction).createWithinLimit(
          {
            id: randomUUID(),
            siteId: site.id,
            tokenHash: hashToken(token),
            role: request.body.role,
            email,
            invitedBy: accountOf(request).id,
            expiresAt: new Date(Date.now() + INVITATION_LIFETIME_MS),
          },
          MAX_PENDING_INVITATIONS_PER_SITE,
        )
        if (created === undefined) {
          throw new ApiError('conflict', `A site holds at most ${MAX_PENDING_INVITATIONS_PER_SITE} pending invitations; revoke one first.`)
        }
        // The token never goes in the log: whoever reads the log must not be able to join with it.
        const details = { invitationId: created.id, role: created.role, email: created.email, expiresAt: created.expiresAt.toISOString() }
        await recordSiteAudit(transaction, request, { action: 'site.invitation_created', site: locked, details })
        return created
      })
      const url = `${expectedOrigin(request, app.config) ?? ''}/dashboard/invite#${token}`
      return reply.code(201).send({ ...invitationView(invitation), token, url })
    },
  )

  app.get(
    '/sites/:id/invitations',
    {
      schema: {
        tags: ['dashboard'],
        summary: "The site's pending invitations",
        description: 'By the owner or an admin; never their tokens. Accepted, revoked and expired invitations are not listed.',
        security: dashboardSecurity,
        params: IdParams,
        response: { 200: Type.Object({ items: Type.Array(Invitation) }), 404: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request) => {
      const { site } = await app.findSite(request, request.params.id, 'manage')
      return { items: (await invitations.listPending(site.id)).map(invitationView) }
    },
  )

  app.delete(
    '/sites/:id/invitations/:invitationId',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Revoke an invitation',
        description: 'By the owner or an admin; its link stops working at once.',
        security: dashboardSecurity,
        params: InvitationParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...siteChangeErrors, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { site } = await app.findSite(request, request.params.id, 'manage')
      const { invitationId } = request.params
      const notFound = () => new ApiError('not_found', 'There is no pending invitation with this id for this site.')
      if (!isUuid(invitationId)) throw notFound()
      await auditedSiteTransaction(app, request, site, 'manage', async (transaction, locked) => {
        const revoked = await createSiteInvitationRepository(transaction).delete(site.id, invitationId)
        if (revoked === undefined) throw notFound()
        await recordSiteAudit(transaction, request, { action: 'site.invitation_revoked', site: locked, details: { invitationId, ...revoked } })
      })
      return reply.code(204).send(null)
    },
  )
}

export default siteInvitationsRoutes
