import type { MemberRole } from '../../domain/sites/site-roles.js'
import type { SqlExecutor } from '../ports.js'

export interface SiteInvitation {
  id: string
  siteId: string
  role: MemberRole
  /** The only address that may accept it; null for anyone with the link. */
  email: string | null
  invitedBy: string
  /** The inviter's e-mail address, as the invitee is shown it. */
  inviterEmail: string
  createdAt: Date
  expiresAt: Date
}

export interface NewSiteInvitation {
  id: string
  siteId: string
  tokenHash: string
  role: MemberRole
  email: string | null
  invitedBy: string
  expiresAt: Date
}

interface InvitationRow {
  id: string
  site_id: string
  role: MemberRole
  email: string | null
  invited_by: string
  inviter_email: string
  created_at: Date
  expires_at: Date
}

const invitationColumns = `site_invitations.id, site_invitations.site_id, site_invitations.role, site_invitations.email, site_invitations.invited_by,
  inviters.email AS inviter_email, site_invitations.created_at, site_invitations.expires_at`

const toInvitation = (row: InvitationRow): SiteInvitation => ({
  id: row.id,
  siteId: row.site_id,
  role: row.role,
  email: row.email,
  invitedBy: row.invited_by,
  inviterEmail: row.inviter_email,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
})

/**
 * Pending invitations to sites (migration 027). An invitation is pending while its row exists and
 * has not expired (by the database's clock); accepting or revoking one deletes it, so a used
 * token is as unknown as one never issued.
 */
/** A pending invitation deleted with its inviter's membership or account. */
export interface RevokedInvitation {
  id: string
  role: MemberRole
  email: string | null
}

export function createSiteInvitationRepository(database: SqlExecutor) {
  return {
    /**
     * Inserts the invitation unless the site has `limit` pending already (undefined then). The
     * site's expired invitations are deleted first: nothing else reads them. Exact when the caller
     * holds the site's row locked (auditedSiteTransaction), as every change of a site does.
     */
    async createWithinLimit(invitation: NewSiteInvitation, limit: number): Promise<SiteInvitation | undefined> {
      await database.query('DELETE FROM site_invitations WHERE site_id = $1 AND expires_at <= now()', [invitation.siteId])
      const rows = await database.query<InvitationRow>(
        `WITH inserted AS (
           INSERT INTO site_invitations (id, site_id, token_hash, role, email, invited_by, expires_at)
           SELECT $1, $2, $3, $4, $5, $6, $7 WHERE (SELECT count(*) FROM site_invitations WHERE site_id = $2 AND expires_at > now()) < $8::integer
           RETURNING *
         )
         SELECT ${invitationColumns.replaceAll('site_invitations.', 'inserted.')} FROM inserted JOIN accounts inviters ON inviters.id = inserted.invited_by`,
        [invitation.id, invitation.siteId, invitation.tokenHash, invitation.role, invitation.email, invitation.invitedBy, invitation.expiresAt, limit],
      )
      return rows[0] === undefined ? undefined : toInvitation(rows[0])
    },

    /**
     * The site's pending invitations, oldest first. Not those of a disabled inviter: disabling
     * deletes them, and an instance of an older version may have disabled it without.
     */
    async listPending(siteId: string): Promise<SiteInvitation[]> {
      const rows = await database.query<InvitationRow>(
        `SELECT ${invitationColumns} FROM site_invitations JOIN accounts inviters ON inviters.id = site_invitations.invited_by
          WHERE site_invitations.site_id = $1 AND site_invitations.expires_at > now() AND inviters.disabled_at IS NULL
          ORDER BY site_invitations.created_at, site_invitations.id`,
        [siteId],
      )
      return rows.map(toInvitation)
    },

    /**
     * The pending invitation with this token's hash, its row locked until the transaction ends:
     * of two acceptances at once, the second waits, then finds it gone. Not one whose inviter is
     * disabled (as listPending): an account the operator disabled lets no one in.
     */
    async findPendingByTokenHash(tokenHash: string, options: { forUpdate: boolean }): Promise<SiteInvitation | undefined> {
      const rows = await database.query<InvitationRow>(
        `SELECT ${invitationColumns} FROM site_invitations JOIN accounts inviters ON inviters.id = site_invitations.invited_by
          WHERE site_invitations.token_hash = $1 AND site_invitations.expires_at > now() AND inviters.disabled_at IS NULL${options.forUpdate ? ' FOR UPDATE OF site_invitations' : ''}`,
        [tokenHash],
      )
      return rows[0] === undefined ? undefined : toInvitation(rows[0])
    },

    /**
     * Whether the account may accept the invitation: any account when it names no address, else
     * the account with that address, compared as log-in compares addresses (lower() in the database).
     */
    async isAddressedTo(invitationId: string, accountId: string): Promise<boolean> {
      const rows = await database.query(
        `SELECT 1 FROM site_invitations JOIN accounts ON accounts.id = $2
          WHERE site_invitations.id = $1 AND (site_invitations.email IS NULL OR lower(site_invitations.email) = lower(accounts.email))`,
        [invitationId, accountId],
      )
      return rows.length > 0
    },

    /** Deletes the site's invitation (revoked, or used); the invitation, or undefined when it was not there. */
    async delete(siteId: string, id: string): Promise<{ role: MemberRole; email: string | null } | undefined> {
      const rows = await database.query<{ role: MemberRole; email: string | null }>(
        'DELETE FROM site_invitations WHERE site_id = $1 AND id = $2 RETURNING role, email',
        [siteId, id],
      )
      return rows[0]
    },

    /**
     * Deletes what this account invited to any site (the operator disabling it): the pending ones,
     * with their site and its owner, whose log tells why the link stopped working.
     */
    async deleteAllInvitedBy(accountId: string): Promise<(RevokedInvitation & { site: { id: string; name: string; accountId: string | null } })[]> {
      const rows = await database.query<{ id: string; role: MemberRole; email: string | null; siteId: string; siteName: string; ownerId: string | null; isPending: boolean }>(
        `WITH deleted AS (DELETE FROM site_invitations WHERE invited_by = $1 RETURNING id, site_id, role, email, expires_at, created_at)
         SELECT deleted.id, deleted.role, deleted.email, sites.id AS "siteId", sites.name AS "siteName", sites.account_id AS "ownerId", deleted.expires_at > now() AS "isPending"
           FROM deleted JOIN sites ON sites.id = deleted.site_id
          ORDER BY deleted.created_at, deleted.id`,
        [accountId],
      )
      return rows
        .filter((row) => row.isPending)
        .map(({ id, role, email, siteId, siteName, ownerId }) => ({ id, role, email, site: { id: siteId, name: siteName, accountId: ownerId } }))
    },

    /**
     * Deletes what this account invited to the site: a member who leaves, is removed or loses admin
     * takes no way back along. Answers the pending ones (as deleteAllInvitedBy), whose revocation is told.
     */
    async deleteInvitedBy(siteId: string, accountId: string): Promise<RevokedInvitation[]> {
      const rows = await database.query<RevokedInvitation & { isPending: boolean }>(
        'DELETE FROM site_invitations WHERE site_id = $1 AND invited_by = $2 RETURNING id, role, email, expires_at > now() AS "isPending"',
        [siteId, accountId],
      )
      return rows.filter((row) => row.isPending).map(({ id, role, email }) => ({ id, role, email }))
    },
  }
}
