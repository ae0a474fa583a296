import { Type } from 'typebox'
import { MEMBER_ROLES, SITE_ROLES, type SiteRole } from '../../../domain/sites/site-roles.js'
import type { SiteInvitation } from '../../../storage/sql/site-invitation-repository.js'
import { named } from '../named-schemas.js'
import { stringEnum } from '../public-schemas.js'

export const MemberRoleSchema = stringEnum(MEMBER_ROLES, {
  description: 'admin: everything the owner may do on the site but delete it (settings, secret, webhook, members); viewer: reads only (the site, its stats, logs and webhook deliveries)',
})

export const Member = named('Member', Type.Object({
  accountId: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: stringEnum(SITE_ROLES),
  since: Type.String({ format: 'date-time', description: "When the account joined (the owner: when the site was made)" }),
  twoFactor: Type.Optional(
    Type.Boolean({
      description: "Whether the account has two-factor authentication on: in the list the owner and admins read only (a site that requires it of its members shuts out those without it)",
    }),
  ),
}))

export const MemberParams = Type.Object({ id: Type.String({ description: "The site's UUID" }), accountId: Type.String({ description: "The member's account id (UUID)" }) })

export function memberView(member: { accountId: string; email: string; role: SiteRole; since: Date }): Type.Static<typeof Member> {
  return { accountId: member.accountId, email: member.email, role: member.role, since: member.since.toISOString() }
}

/** The member as the owner and admins see it in the list: with whether it has two-factor on. */
export function memberWithTwoFactorView(member: { accountId: string; email: string; role: SiteRole; since: Date; twoFactor: boolean }): Type.Static<typeof Member> {
  return { ...memberView(member), twoFactor: member.twoFactor }
}

/** An invitation's fields, which the one just made (with its token) has too. */
export const invitationProperties = {
  id: Type.String({ format: 'uuid' }),
  role: MemberRoleSchema,
  email: Type.Union([Type.String(), Type.Null()], { description: 'The only address whose account may accept it; null for any account with the link' }),
  invitedBy: Type.String({ description: "The inviter's e-mail address" }),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
}

export const Invitation = named('Invitation', Type.Object(invitationProperties))

export function invitationView(invitation: SiteInvitation): Type.Static<typeof Invitation> {
  return {
    id: invitation.id,
    role: invitation.role,
    email: invitation.email,
    invitedBy: invitation.inviterEmail,
    createdAt: invitation.createdAt.toISOString(),
    expiresAt: invitation.expiresAt.toISOString(),
  }
}

/** An invitation's token as the invitee's requests carry it: in the body, never in a URL that logs and Referer keep. */
export const InvitationTokenBody = Type.Object(
  { token: Type.String({ maxLength: 200, description: 'The token of the invitation link (the part after #)' }) },
  { additionalProperties: false },
)
