/**
 * Who may do what on a site. The account that made it is its owner; the accounts it is shared
 * with are members, each an admin or a viewer (migration 027).
 */
export const MEMBER_ROLES = ['admin', 'viewer'] as const
export type MemberRole = (typeof MEMBER_ROLES)[number]

export const SITE_ROLES = ['owner', ...MEMBER_ROLES] as const
export type SiteRole = (typeof SITE_ROLES)[number]

/**
 * What a route needs of the requester: `read` the site and its logs, `manage` it (settings,
 * secret, webhook, members and invitations), or `own` it (delete it, make a member its owner).
 */
export type SiteAccess = 'read' | 'manage' | 'own'

const rolesAllowed: Record<SiteAccess, readonly SiteRole[]> = {
  read: SITE_ROLES,
  manage: ['owner', 'admin'],
  own: ['owner'],
}

export function isAllowed(role: SiteRole, access: SiteAccess): boolean {
  return rolesAllowed[access].includes(role)
}

/** Members of one site besides its owner: a team's worth, and a bound on what the list reads. */
export const MAX_MEMBERS_PER_SITE = 50
/** Invitations a site may have pending at once. */
export const MAX_PENDING_INVITATIONS_PER_SITE = 20
/** How long an invitation link can be accepted. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3_600_000
