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
 * secret, webhook, members and invitations), or `own` it (delete it, make a member its owner);
 * `leave` is a member's leaving it, which a site that requires two-factor authentication of its
 * members lets one without it do too.
 */
export type SiteAccess = 'read' | 'manage' | 'own' | 'leave'

const rolesAllowed: Record<SiteAccess, readonly SiteRole[]> = {
  read: SITE_ROLES,
  manage: ['owner', 'admin'],
  own: ['owner'],
  leave: SITE_ROLES,
}

/**
 * Whether the requester reaches the site only if its account has two-factor authentication on:
 * as a member (admin or viewer) of a site whose owner requires it (settings.requireTwoFactor),
 * for anything but leaving it. The owner, who turns the requirement on only with two-factor on,
 * is never shut out of its own site: turning two-factor off later takes nothing away from it.
 */
export function needsTwoFactor(site: { settings: { requireTwoFactor: boolean } }, role: SiteRole, access: SiteAccess): boolean {
  return site.settings.requireTwoFactor && role !== 'owner' && access !== 'leave'
}

export const SITE_REQUIRES_TWO_FACTOR_MESSAGE =
  "This site's owner requires two-factor authentication of its members: turn it on for your account (Account, Two-factor authentication), then open the site again."

export function isAllowed(role: SiteRole, access: SiteAccess): boolean {
  return rolesAllowed[access].includes(role)
}

/** Members of one site besides its owner: a team's worth, and a bound on what the list reads. */
export const MAX_MEMBERS_PER_SITE = 50
/** Invitations a site may have pending at once. */
export const MAX_PENDING_INVITATIONS_PER_SITE = 20
/** How long an invitation link can be accepted. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3_600_000
