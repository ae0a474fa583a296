import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Site } from '../../../domain/sites/site.js'
import { isAllowed, type MemberRole } from '../../../domain/sites/site-roles.js'
import { isUuid } from '../../../domain/uuid.js'
import { ApiError } from '../../../errors.js'
import { accountOf } from '../../../plugins/authentication.js'
import { createSiteInvitationRepository, type RevokedInvitation } from '../../../storage/sql/site-invitation-repository.js'
import { createTwoFactorRepository } from '../../../storage/sql/two-factor-repository.js'
import { createSiteMemberRepository, type SiteMember } from '../../../storage/sql/site-member-repository.js'
import type { SqlExecutor } from '../../../storage/ports.js'
import { auditedSiteTransaction, recordSiteAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams } from '../dashboard-schemas.js'
import { Member, MemberParams, MemberRoleSchema, memberView, memberWithTwoFactorView } from './member-schemas.js'

const noSuchMember = () => new ApiError('not_found', 'This account is not a member of the site.')

/**
 * The account id of the path as the database writes UUIDs (lower case), so that it compares equal
 * to the owner's and the requester's ids whichever case the client sent.
 */
const accountIdOf = (params: { accountId: string }): string => params.accountId.toLowerCase()

/**
 * A member's change of role (`role`) or removal (null), in the change's transaction: the member
 * as it was (404 when the account is none), and the invitations it made gone if it is no admin
 * any more, so that a member demoted or removed keeps no link to let itself (or another account
 * of its own) back in. The owner, as the site's lock finds it (a member made owner while the
 * change waited is one), answers 409 owner_role_fixed.
 */
async function changeMembership(
  transaction: SqlExecutor,
  site: Pick<Site, 'id' | 'accountId'>,
  accountId: string,
  role: MemberRole | null,
): Promise<SiteMember & { revokedInvitations: RevokedInvitation[] }> {
  if (accountId === site.accountId) throw new ApiError('owner_role_fixed')
  const siteId = site.id
  const members = createSiteMemberRepository(transaction)
  const before = await members.findForUpdate(siteId, accountId)
  if (before === undefined) throw noSuchMember()
  if (role === null) await members.remove(siteId, accountId)
  else await members.changeRole(siteId, accountId, role)
  const revokedInvitations = role === 'admin' ? [] : await createSiteInvitationRepository(transaction).deleteInvitedBy(siteId, accountId)
  return { ...before, revokedInvitations }
}

/**
 * Records the pending invitations a member's removal, departure or demotion revoked, one
 * site.invitation_revoked each (as the owner or an admin revoking them would), so that the owner's
 * log tells why a link stopped working. Expired ones went unannounced: they worked no more.
 */
async function recordRevokedInvitations(
  transaction: SqlExecutor,
  request: FastifyRequest,
  site: Pick<Site, 'id' | 'name' | 'accountId'>,
  member: Pick<SiteMember, 'email'> & { revokedInvitations: RevokedInvitation[] },
  reason: 'member_removed' | 'member_left' | 'made_viewer',
): Promise<void> {
  for (const { id, role, email } of member.revokedInvitations) {
    const details = { invitationId: id, role, email, invitedBy: member.email, reason }
    await recordSiteAudit(transaction, request, { action: 'site.invitation_revoked', site, details })
  }
}

/** Who a site is shared with, and the owner's and admins' changes to that; a member leaving. */
const siteMembersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const members = createSiteMemberRepository(app.database)
  const twoFactor = createTwoFactorRepository(app.database)

  app.get(
    '/sites/:id/members',
    {
      schema: {
        tags: ['dashboard'],
        summary: "The site's owner and members, with their roles",
        description:
          'Any member may read it. The owner comes first, then the members in the order they joined. ' +
          'For the owner and admins, each says whether its account has two-factor authentication on (twoFactor).',
        security: dashboardSecurity,
        params: IdParams,
        response: { 200: Type.Object({ items: Type.Array(Member) }), 404: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request) => {
      const { site, role } = await app.findSite(request, request.params.id, 'read')
      // Whether each has two-factor on is the owner's and admins' to know (who is shut out once the
      // site requires it), not a viewer's.
      const view = isAllowed(role, 'manage') ? memberWithTwoFactorView : memberView
      const owner = site.accountId === null ? undefined : await app.accounts.findById(site.accountId)
      const ownerTwoFactor = owner !== undefined && (await twoFactor.isEnabled(owner.id))
      const owners = owner === undefined ? [] : [view({ accountId: owner.id, email: owner.email, role: 'owner', since: site.createdAt, twoFactor: ownerTwoFactor })]
      const shared = (await members.listBySite(site.id)).map((member) => view({ ...member, since: member.createdAt }))
      return { items: [...owners, ...shared] }
    },
  )

  app.put(
    '/sites/:id/members/:accountId',
    {
      schema: {
        tags: ['dashboard'],
        summary: "Change a member's role",
        description:
          "By the owner or an admin. The owner's role is fixed (409 owner_role_fixed): the owner may make a member the owner instead (POST /api/v1/sites/{id}/transfer). A member made a viewer loses the invitations it made. " +
          'The change applies to the member\'s next request, on every instance.',
        security: dashboardSecurity,
        params: MemberParams,
        body: Type.Object({ role: MemberRoleSchema }, { additionalProperties: false, examples: [{ role: 'viewer' }] }),
        response: { 200: Member, 400: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, ...authenticatedErrors },
        errorCodes: ['owner_role_fixed'],
      },
    },
    async (request) => {
      const { site } = await app.findSite(request, request.params.id, 'manage')
      const accountId = accountIdOf(request.params)
      if (!isUuid(accountId)) throw noSuchMember()
      const { role } = request.body
      const before = await auditedSiteTransaction(app, request, site, 'manage', async (transaction, locked) => {
        const member = await changeMembership(transaction, locked, accountId, role)
        if (member.role !== role) {
          const details = { accountId, email: member.email, from: member.role, to: role }
          await recordSiteAudit(transaction, request, { action: 'site.member_role_changed', site: locked, details }, accountId)
        }
        await recordRevokedInvitations(transaction, request, locked, member, 'made_viewer')
        return member
      }, { alsoLocking: [accountId] })
      const { revokedInvitations: _revoked, ...unchanged } = before
      const member = { ...unchanged, role }
      return memberView({ ...member, since: member.createdAt })
    },
  )

  app.delete(
    '/sites/:id/members/:accountId',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Remove a member, or leave the site',
        description:
          'By the owner or an admin for any member; by a member (a viewer too) for itself, to leave the site. The owner cannot be removed (409 owner_role_fixed). ' +
          'The member loses the site at once, on every instance, and the invitations it made are revoked.',
        security: dashboardSecurity,
        params: MemberParams,
        response: { 204: Type.Null(), 404: ErrorResponse, 409: ErrorResponse, ...authenticatedErrors },
        errorCodes: ['owner_role_fixed'],
      },
    },
    async (request, reply) => {
      const accountId = accountIdOf(request.params)
      const isLeaving = accountId === accountOf(request).id
      const access = isLeaving ? 'leave' : 'manage'
      const { site } = await app.findSite(request, request.params.id, access)
      if (!isUuid(accountId)) throw noSuchMember()
      await auditedSiteTransaction(app, request, site, access, async (transaction, locked) => {
        const member = await changeMembership(transaction, locked, accountId, null)
        const action = isLeaving ? 'site.member_left' : 'site.member_removed'
        await recordSiteAudit(transaction, request, { action, site: locked, details: { accountId, email: member.email, role: member.role } }, accountId)
        await recordRevokedInvitations(transaction, request, locked, member, isLeaving ? 'member_left' : 'member_removed')
      }, { alsoLocking: [accountId] })
      return reply.code(204).send(null)
    },
  )
}

export default siteMembersRoutes
