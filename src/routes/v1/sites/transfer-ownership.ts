import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { MAX_MEMBERS_PER_SITE } from '../../../domain/sites/site-roles.js'
import type { Site as SiteRecord } from '../../../domain/sites/site.js'
import { isUuid } from '../../../domain/uuid.js'
import { ApiError, invalidRequest } from '../../../errors.js'
import { accountOf, sessionIdOf } from '../../../plugins/authentication.js'
import { createSiteMemberRepository } from '../../../storage/sql/site-member-repository.js'
import { createSiteRepository } from '../../../storage/sql/site-repository.js'
import { createTwoFactorRepository } from '../../../storage/sql/two-factor-repository.js'
import { auditedSiteTransaction, recordSiteAudit, type SiteChangeWork } from '../audit-log/audit-trail.js'
import { authenticatedErrors, CurrentPassword, ErrorResponse, IdParams, SecondFactorCode } from '../dashboard-schemas.js'
import { confirmWithPassword, withSecondFactorTransactions } from '../me/account-confirmation.js'
import { MAX_SITES_PER_ACCOUNT } from './manage-sites.js'
import { etagHeader, tagWithRevision } from './site-revision.js'
import { Site, siteView } from './site-schemas.js'

const TransferBody = Type.Object(
  {
    accountId: Type.String({ maxLength: 100, description: "The account id (UUID) of the member to make the site's owner, as the members list gives it" }),
    password: CurrentPassword,
    code: Type.Optional(SecondFactorCode),
  },
  { additionalProperties: false, examples: [{ accountId: '0b7e5a52-8c1d-4f3e-9a2b-6c7d8e9f0a1b', password: 'the owner’s password' }] },
)

const ACTION = "make a member the site's owner"

/**
 * Handing a site to one of its members: the owner's alone, from a logged-in session, confirmed as
 * the account's own changes are (password, and the second factor while it is on). A full API key
 * that leaked must not be able to take a site over for good: invite its holder's own account,
 * accept, transfer, remove the owner.
 */
const transferOwnershipRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/sites/:id/transfer',
    {
      schema: {
        tags: ['dashboard'],
        summary: "Make a member the site's owner",
        description:
          "By the owner only (403 forbidden for its members), from a logged-in session only (403 forbidden with an API key, which, if it leaked, must not take the site over), " +
          "confirmed by the owner's current password (a wrong one: 400 validation_error on password, counted against the log-in budget: 429 rate_limited beyond) " +
          'and, while two-factor authentication is on, a code of the second factor (`code`), as a password change. ' +
          "The member becomes the owner, and the owner an admin (answered: the site with the caller's new role). " +
          `409 not_a_member when the account is no member of the site, already_owner for the owner's own id, member_lacks_two_factor when the site requires two-factor authentication of its members (settings.requireTwoFactor) and the member has it off, site_limit_reached when the member owns ${MAX_SITES_PER_ACCOUNT} sites already. ` +
          "The site's site key, secret keys, settings, webhook, log and pending invitations stay as they are; its events go to the new owner's audit log from then on. " +
          "The previous owner's sessions and API keys have an admin's rights on it from the next request, on every instance.",
        sessionOnly: ACTION,
        params: IdParams,
        body: TransferBody,
        response: { 200: Site, 400: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 429: ErrorResponse, ...authenticatedErrors },
        responseHeaders: { 200: etagHeader },
        errorCodes: ['already_owner', 'not_a_member', 'member_lacks_two_factor', 'site_limit_reached'],
      },
    },
    async (request, reply) => {
      const { site } = await app.findSite(request, request.params.id, 'own')
      sessionIdOf(request)
      const previousOwner = accountOf(request)
      // Lower case, as the database writes UUIDs: compared with the owner's id whichever case was sent.
      const accountId = request.body.accountId.toLowerCase()
      if (!isUuid(accountId)) throw invalidRequest([{ field: 'accountId', message: 'must be an account id (a UUID)' }])
      if (accountId === previousOwner.id) throw new ApiError('already_owner')
      const { password, code } = request.body
      const confirmed = await confirmWithPassword(app, request, { field: 'password', password, secondFactorCode: code })
      const handOver: SiteChangeWork<'own', SiteRecord> = async (transaction, locked) => {
        const members = createSiteMemberRepository(transaction)
        const member = await members.findForUpdate(locked.id, accountId)
        if (member === undefined) throw new ApiError('not_a_member')
        // An owner is exempt from the requirement (needsTwoFactor): handing the site to a member
        // without two-factor would lift it for them. Their account is locked with the owner's, so
        // turning two-factor off cannot slip in between.
        if (locked.settings.requireTwoFactor && !(await createTwoFactorRepository(transaction).isEnabled(accountId))) {
          throw new ApiError('member_lacks_two_factor', `This site requires two-factor authentication of its members, and ${member.email} has it off: they must turn it on before they can own the site.`)
        }
        const owned = await createSiteRepository(transaction).changeOwnerWithinLimit(locked.id, accountId, MAX_SITES_PER_ACCOUNT)
        if (owned === undefined) {
          throw new ApiError('site_limit_reached', `${member.email} owns ${MAX_SITES_PER_ACCOUNT} sites already, the most an account may; they must delete one first.`)
        }
        await members.remove(locked.id, accountId)
        // One member out, one in: the site's count stays within the limit it was in.
        if ((await members.addWithinLimit(locked.id, previousOwner.id, 'admin', MAX_MEMBERS_PER_SITE)) === undefined) throw new Error('the previous owner was not made an admin')
        const details = { accountId, email: member.email, role: member.role, previousOwnerId: previousOwner.id, previousOwnerEmail: previousOwner.email }
        // In the new owner's log, and (the actor being the previous owner) a copy in the previous owner's.
        await recordSiteAudit(transaction, request, { action: 'site.ownership_transferred', site: owned, details })
        return owned
      }
      // The code counts against the second factor's budgets once for the request, however often
      // auditedSiteTransaction starts anew (the owner changed while it waited): each attempt's
      // transaction takes it, and locks the owner's account first, before the site, as
      // auditedSiteTransaction's order wants; the one that commits spends it, with the change.
      // The new owner's account is locked with the owner's, before the site: its deletion, which
      // locks it first and then its memberships, is waited for, not deadlocked with.
      const transferred = await withSecondFactorTransactions(app, request, confirmed, { code }, (inSecondFactorTransaction) =>
        auditedSiteTransaction(app, request, site, 'own', handOver, {
          alsoLocking: [accountId],
          transaction: inSecondFactorTransaction,
        }),
      )
      // Instances' copies name the owner, whose share of webhook deliveries the site counts against.
      await app.siteCache.invalidate(transferred)
      tagWithRevision(reply, transferred)
      return siteView(transferred, 'admin')
    },
  )
}

export default transferOwnershipRoutes
