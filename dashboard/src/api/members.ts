import { request } from './client.js'
import { readList } from './read-list.js'
import type { CreatedInvitation, InvitationPreview, MemberRole, Site, SiteInvitation, SiteMember } from './types.js'

const sitePath = (id: string) => `/sites/${encodeURIComponent(id)}`

export async function listMembers(siteId: string): Promise<SiteMember[]> {
  return readList<SiteMember>(await request<unknown>(`${sitePath(siteId)}/members`))
}

export function changeMemberRole(siteId: string, accountId: string, role: MemberRole): Promise<SiteMember> {
  return request<SiteMember>(`${sitePath(siteId)}/members/${encodeURIComponent(accountId)}`, { method: 'PUT', body: { role } })
}

/** Removes a member, or, with the account's own id, leaves the site. */
export async function removeMember(siteId: string, accountId: string): Promise<void> {
  await request<unknown>(`${sitePath(siteId)}/members/${encodeURIComponent(accountId)}`, { method: 'DELETE' })
}

export async function listInvitations(siteId: string): Promise<SiteInvitation[]> {
  return readList<SiteInvitation>(await request<unknown>(`${sitePath(siteId)}/invitations`))
}

export function createInvitation(siteId: string, input: { role: MemberRole; email?: string }): Promise<CreatedInvitation> {
  return request<CreatedInvitation>(`${sitePath(siteId)}/invitations`, { method: 'POST', body: input })
}

export async function revokeInvitation(siteId: string, invitationId: string): Promise<void> {
  await request<unknown>(`${sitePath(siteId)}/invitations/${encodeURIComponent(invitationId)}`, { method: 'DELETE' })
}

/** The token goes in the body: a URL would leave it in logs and Referer headers. */
export function previewInvitation(token: string): Promise<InvitationPreview> {
  return request<InvitationPreview>('/invitations/preview', { method: 'POST', body: { token } })
}

export function acceptInvitation(token: string): Promise<Site> {
  return request<Site>('/invitations/accept', { method: 'POST', body: { token } })
}

/**
 * Makes a member the site's owner (the owner's alone, from a session, confirmed by the password and,
 * while two-factor is on, a code); answers the site as the caller now has it, an admin.
 */
export function transferOwnership(siteId: string, accountId: string, password: string, code?: string): Promise<Site> {
  return request<Site>(`${sitePath(siteId)}/transfer`, { method: 'POST', body: code === undefined ? { accountId, password } : { accountId, password, code } })
}
