import type { MemberRole } from '../../domain/sites/site-roles.js'
import type { SqlExecutor } from '../ports.js'

export interface SiteMember {
  accountId: string
  email: string
  role: MemberRole
  createdAt: Date
  /** Whether the member's account has two-factor authentication on. */
  twoFactor: boolean
}

interface MemberRow {
  account_id: string
  email: string
  role: MemberRole
  created_at: Date
  two_factor: boolean
}

const toMember = (row: MemberRow): SiteMember => ({ accountId: row.account_id, email: row.email, role: row.role, createdAt: row.created_at, twoFactor: row.two_factor })

/**
 * The accounts a site is shared with (migration 027), besides its owner. Read on every request of
 * a member, never cached: a member removed or made a viewer is refused at once on every instance.
 */
export function createSiteMemberRepository(database: SqlExecutor) {
  return {
    async findRole(siteId: string, accountId: string): Promise<MemberRole | undefined> {
      const rows = await database.query<{ role: MemberRole }>('SELECT role FROM site_members WHERE site_id = $1 AND account_id = $2', [siteId, accountId])
      return rows[0]?.role
    },

    /**
     * The sites the account is a member of whose owners require two-factor authentication of their
     * members (settings.requireTwoFactor) while the account has it off: those closed to it
     * (needsTwoFactor), oldest first; none for an account with two-factor on.
     */
    async closedForTwoFactor(accountId: string): Promise<{ id: string; name: string }[]> {
      return database.query<{ id: string; name: string }>(
        `SELECT sites.id, sites.name FROM site_members JOIN sites ON sites.id = site_members.site_id
          WHERE site_members.account_id = $1 AND sites.settings @> '{"requireTwoFactor": true}'
            AND EXISTS (SELECT 1 FROM accounts WHERE accounts.id = $1 AND accounts.totp_enabled_at IS NULL)
          ORDER BY sites.created_at, sites.id`,
        [accountId],
      )
    },

    /** The member with its e-mail address, its row locked until the transaction ends (a change that records the role before). */
    async findForUpdate(siteId: string, accountId: string): Promise<SiteMember | undefined> {
      const rows = await database.query<MemberRow>(
        `SELECT site_members.account_id, accounts.email, site_members.role, site_members.created_at, accounts.totp_enabled_at IS NOT NULL AS two_factor
           FROM site_members JOIN accounts ON accounts.id = site_members.account_id
          WHERE site_members.site_id = $1 AND site_members.account_id = $2 FOR UPDATE OF site_members`,
        [siteId, accountId],
      )
      return rows[0] === undefined ? undefined : toMember(rows[0])
    },

    /** The members, earliest first, with their accounts' e-mail addresses. */
    async listBySite(siteId: string): Promise<SiteMember[]> {
      const rows = await database.query<MemberRow>(
        `SELECT site_members.account_id, accounts.email, site_members.role, site_members.created_at, accounts.totp_enabled_at IS NOT NULL AS two_factor
           FROM site_members JOIN accounts ON accounts.id = site_members.account_id
          WHERE site_members.site_id = $1 ORDER BY site_members.created_at, site_members.account_id`,
        [siteId],
      )
      return rows.map(toMember)
    },

    /**
     * Adds the member unless the site has `limit` members already, or it is one already (undefined
     * then: the caller checked the membership first, in its transaction). Exact when the caller
     * holds the site's row locked (auditedSiteTransaction), as every change of a site does: members
     * joining at once are counted one after the other.
     */
    async addWithinLimit(siteId: string, accountId: string, role: MemberRole, limit: number): Promise<Date | undefined> {
      const rows = await database.query<{ created_at: Date }>(
        `INSERT INTO site_members (site_id, account_id, role)
         SELECT $1, $2, $3 WHERE (SELECT count(*) FROM site_members WHERE site_id = $1) < $4::integer
         ON CONFLICT (site_id, account_id) DO NOTHING
         RETURNING created_at`,
        [siteId, accountId, role, limit],
      )
      return rows[0]?.created_at
    },

    async changeRole(siteId: string, accountId: string, role: MemberRole): Promise<boolean> {
      const rows = await database.query('UPDATE site_members SET role = $3 WHERE site_id = $1 AND account_id = $2 RETURNING role', [siteId, accountId, role])
      return rows.length > 0
    },

    async remove(siteId: string, accountId: string): Promise<boolean> {
      const rows = await database.query('DELETE FROM site_members WHERE site_id = $1 AND account_id = $2 RETURNING role', [siteId, accountId])
      return rows.length > 0
    },
  }
}

export type SiteMemberRepository = ReturnType<typeof createSiteMemberRepository>
