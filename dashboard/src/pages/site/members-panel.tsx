import { useCallback, useState } from 'preact/hooks'
import { changeMemberRole, createInvitation, listInvitations, listMembers, removeMember, revokeInvitation } from '../../api/members.js'
import type { CreatedInvitation, MemberRole, Site } from '../../api/types.js'
import { ConfirmDialog } from '../../components/confirm-dialog.js'
import { CopyButton } from '../../components/copy-button.js'
import { ErrorNotice, Loading } from '../../components/notice.js'
import { formatDateTime } from '../../lib/format.js'
import { navigate } from '../../lib/router.js'
import { useLoader } from '../../lib/use-loader.js'

interface MembersPanelProps {
  site: Site
  /** The account looking, to tell its own row (Leave) from the others. */
  accountId: string
}

/** Who the site is shared with; the owner and admins invite, change roles and remove; members leave. */
export function MembersPanel({ site, accountId }: MembersPanelProps) {
  const canManage = site.role !== 'viewer'
  const loadMembers = useCallback(() => listMembers(site.id), [site.id])
  const [members, reloadMembers] = useLoader(loadMembers, site.id)
  const loadInvitations = useCallback(() => (canManage ? listInvitations(site.id) : Promise.resolve([])), [site.id, canManage])
  const [invitations, reloadInvitations] = useLoader(loadInvitations, site.id)
  const [created, setCreated] = useState<CreatedInvitation | undefined>(undefined)
  const [role, setRole] = useState<MemberRole>('viewer')
  const [email, setEmail] = useState('')
  const [error, setError] = useState<unknown>(undefined)
  const [isLeaving, setIsLeaving] = useState(false)

  const act = async (action: () => Promise<unknown>) => {
    setError(undefined)
    try {
      await action()
      reloadMembers()
      reloadInvitations()
    } catch (caught) {
      setError(caught)
    }
  }
  const invite = (event: Event) => {
    event.preventDefault()
    void act(async () => {
      setCreated(await createInvitation(site.id, email.trim() === '' ? { role } : { role, email: email.trim() }))
      setEmail('')
    })
  }
  const leave = () =>
    void act(async () => {
      await removeMember(site.id, accountId)
      navigate({ name: 'sites' }, { replace: true })
    })

  if (members.data === undefined) return members.status === 'error' ? <ErrorNotice error={members.error} /> : <Loading />
  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading">Members</h2>
      {error === undefined ? null : <ErrorNotice error={error} />}
      <table class="table">
        <thead>
          <tr>
            <th scope="col">E-mail</th>
            <th scope="col">Role</th>
            <th scope="col">Since</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {members.data.map((member) => (
            <tr key={member.accountId}>
              <td>{member.email}</td>
              <td>
                {canManage && member.role !== 'owner' ? (
                  <select
                    aria-label={`Role of ${member.email}`}
                    value={member.role}
                    onChange={(event) => void act(() => changeMemberRole(site.id, member.accountId, event.currentTarget.value as MemberRole))}
                  >
                    <option value="admin">admin</option>
                    <option value="viewer">viewer</option>
                  </select>
                ) : (
                  member.role
                )}
              </td>
              <td>{formatDateTime(member.since)}</td>
              <td>
                {member.role === 'owner' ? null : member.accountId === accountId ? (
                  <button type="button" class="button button--small button--danger" onClick={() => setIsLeaving(true)}>
                    Leave this site
                  </button>
                ) : canManage ? (
                  <button type="button" class="button button--small" onClick={() => void act(() => removeMember(site.id, member.accountId))}>
                    Remove {member.email}
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ConfirmDialog title="Leave this site?" confirmLabel="Leave" isOpen={isLeaving} onConfirm={leave} onCancel={() => setIsLeaving(false)}>
        <p>You will no longer see {site.name}; its owner or an admin can invite you again.</p>
      </ConfirmDialog>
      {canManage ? (
        <>
          <h3>Invite</h3>
          <form class="form form--inline" onSubmit={invite}>
            <label>
              Role{' '}
              <select value={role} onChange={(event) => setRole(event.currentTarget.value as MemberRole)}>
                <option value="viewer">viewer (reads only)</option>
                <option value="admin">admin (all but deleting the site)</option>
              </select>
            </label>
            <label>
              Only for this e-mail address (optional){' '}
              <input type="email" value={email} onInput={(event) => setEmail(event.currentTarget.value)} />
            </label>
            <button type="submit" class="button button--primary">
              Invite
            </button>
          </form>
          {created === undefined ? null : (
            <div class="notice notice--success" role="status">
              <p>Send this link to the invitee. It is shown only now, works once, until {formatDateTime(created.expiresAt)}.</p>
              <p>
                <code class="invitation-link">{created.url}</code> <CopyButton text={created.url} what="invitation link" />
              </p>
            </div>
          )}
          <h3>Pending invitations</h3>
          {invitations.data === undefined ? null : invitations.data.length === 0 ? (
            <p>None.</p>
          ) : (
            <ul>
              {invitations.data.map((invitation) => (
                <li key={invitation.id}>
                  {invitation.email ?? 'Anyone with the link'} as {invitation.role}, by {invitation.invitedBy}, until {formatDateTime(invitation.expiresAt)}{' '}
                  <button type="button" class="button button--small" onClick={() => void act(() => revokeInvitation(site.id, invitation.id))}>
                    Revoke
                  </button>
                </li>
              ))}
            </ul>
          )}
        </>
      ) : null}
    </section>
  )
}
