import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { hashToken } from '../../../domain/accounts/tokens.js'
import { MAX_MEMBERS_PER_SITE } from '../../../domain/sites/site-roles.js'
import { ApiError } from '../../../errors.js'
import { accountOf, refuseWithoutTwoFactor, sessionIdOf } from '../../../plugins/authentication.js'
import { createSiteInvitationRepository, type SiteInvitation } from '../../../storage/sql/site-invitation-repository.js'
import { createSiteMemberRepository } from '../../../storage/sql/site-member-repository.js'
import { createTwoFactorRepository } from '../../../storage/sql/two-factor-repository.js'
import { auditedSiteTransaction, recordSiteAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, ErrorResponse } from '../dashboard-schemas.js'
import { InvitationTokenBody, MemberRoleSchema } from '../sites/member-schemas.js'
import { Site, siteView } from '../sites/site-schemas.js'

/** Expired, revoked, used and unknown tokens answer alike: a token's history is nobody's business. */
const unknownInvitation = () => new ApiError('not_found', 'This invitation is unknown, expired, revoked or used already; ask for a new link.')

const InvitationPreview = Type.Object({
  site: Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }),
  role: MemberRoleSchema,
  invitedBy: Type.String({ description: "The inviter's e-mail address" }),
  boundToEmail: Type.Boolean({ description: 'Whether only the account with one e-mail address may accept it' }),
  forYou: Type.Boolean({ description: 'Whether the requesting account may accept it: true when it is bound to no address, or to this account\'s' }),
  email: Type.Union([Type.String(), Type.Null()], {
    description: "The address it is bound to when that is the requesting account's; else null: another account's address is not shown to whoever holds the link",
  }),
  expiresAt: Type.String({ format: 'date-time' }),
  twoFactorRequired: Type.Boolean({
    description: "Whether the site's owner requires two-factor authentication of its members: accepting then needs it on the account first (403 site_requires_two_factor)",
  }),
})

/**
 * What an invitee does with the link: see what it is for, and accept it. The token travels in
 * the body (POST), never in a URL, so no access log or Referer keeps it.
 */
const invitationsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate)
  const invitations = createSiteInvitationRepository(app.database)

  // Reading an invitation by its token is a logged-in person's act (schema.sessionOnly): a script's API key has no business joining sites.
  const pendingInvitation = async (request: FastifyRequest, token: string): Promise<SiteInvitation> => {
    sessionIdOf(request)
    const invitation = await invitations.findPendingByTokenHash(hashToken(token), { forUpdate: false })
    if (invitation === undefined) throw unknownInvitation()
    return invitation
  }

  app.post(
    '/invitations/preview',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'What an invitation link is for, before accepting it',
        description:
          'From a logged-in session only (403 forbidden with an API key). Expired, revoked, used and unknown tokens all answer 404 not_found. ' +
          'An invitation bound to another account\'s e-mail address says so (boundToEmail true, forYou false) without the address.',
        sessionOnly: 'read an invitation',
        body: InvitationTokenBody,
        response: { 200: InvitationPreview, 400: ErrorResponse, 404: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request) => {
      const invitation = await pendingInvitation(request, request.body.token)
      const site = await app.sites.findById(invitation.siteId)
      if (site === undefined) throw unknownInvitation()
      const forYou = await invitations.isAddressedTo(invitation.id, accountOf(request).id)
      return {
        site: { id: site.id, name: site.name },
        role: invitation.role,
        invitedBy: invitation.inviterEmail,
        boundToEmail: invitation.email !== null,
        forYou,
        // A link passed on, or forwarded, must not tell its holder whose address the inviter typed.
        email: forYou ? invitation.email : null,
        expiresAt: invitation.expiresAt.toISOString(),
        twoFactorRequired: site.settings.requireTwoFactor,
      }
    },
  )

  app.post(
    '/invitations/accept',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Accept an invitation: join its site with its role',
        description:
          'From a logged-in session only (403 forbidden with an API key, and for an invitation bound to another e-mail address, which stays pending). ' +
          'Answers 201 with the site. The link works once: of two acceptances at once, one joins and the other gets 404 not_found, as for an expired, revoked or unknown token. ' +
          `The site's owner or a member accepting gets 409 conflict, the link unused; so does anyone once the site has ${MAX_MEMBERS_PER_SITE} members. ` +
          "When the site's owner requires two-factor authentication of its members (settings.requireTwoFactor), an account without it gets 403 site_requires_two_factor, the link unused.",
        sessionOnly: 'accept an invitation',
        body: InvitationTokenBody,
        response: { 201: Site, 400: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, ...authenticatedErrors },
        errorCodes: ['site_requires_two_factor'],
      },
    },
    async (request, reply) => {
      const tokenHash = hashToken(request.body.token)
      const found = await pendingInvitation(request, request.body.token)
      const account = accountOf(request)
      const site = await app.sites.findById(found.siteId)
      if (site === undefined) throw unknownInvitation()
      // The owner's and the site's rows are locked (auditedSiteTransaction) before the
      // invitation's, the order a site's deletion and its owner's take them in (the site, then its
      // invitations by the cascade), so that they wait for each other instead of deadlocking; the
      // site's lock also makes its member count exact.
      const joined = await auditedSiteTransaction(app, request, site, 'invitee', async (transaction, locked) => {
        const siteInvitations = createSiteInvitationRepository(transaction)
        const invitation = await siteInvitations.findPendingByTokenHash(tokenHash, { forUpdate: true })
        if (invitation === undefined) throw unknownInvitation()
        if (!(await siteInvitations.isAddressedTo(invitation.id, account.id))) {
          throw new ApiError('forbidden', 'This invitation is for another e-mail address: log in with that account to accept it.')
        }
        if (locked.accountId === account.id) throw new ApiError('conflict', 'You own this site already.')
        const members = createSiteMemberRepository(transaction)
        const current = await members.findRole(site.id, account.id)
        if (current !== undefined) throw new ApiError('conflict', `You are a member of this site already (${current}).`)
        // Refused before the member is added: the transaction ends with the invitation pending.
        await refuseWithoutTwoFactor(locked, invitation.role, 'read', () => createTwoFactorRepository(transaction).isEnabled(account.id))
        if ((await members.addWithinLimit(site.id, account.id, invitation.role, MAX_MEMBERS_PER_SITE)) === undefined) {
          throw new ApiError('conflict', `A site has at most ${MAX_MEMBERS_PER_SITE} members; ask its owner to remove one first.`)
        }
        await siteInvitations.delete(site.id, invitation.id)
        const details = { accountId: account.id, email: account.email, role: invitation.role, invitationId: invitation.id }
        await recordSiteAudit(transaction, request, { action: 'site.member_joined', site: locked, details })
        return siteView(locked, invitation.role)
      })
      void reply.header('location', `/api/v1/sites/${site.id}`)
      return reply.code(201).send(joined)
    },
  )
}

export default invitationsRoutes
