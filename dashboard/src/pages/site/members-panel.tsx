import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { changeMemberRole, createInvitation, listInvitations, listMembers, removeMember, revokeInvitation } from '../../api/members.js'
import { updateSite } from '../../api/sites.js'
import type { CreatedInvitation, MemberRole, Site, SiteInvitation, SiteMember } from '../../api/types.js'
import { BusyButton } from '../../components/busy-button.js'
import { ConfirmDialog, focusAfterDialog } from '../../components/confirm-dialog.js'
import { CopyButton } from '../../components/copy-button.js'
import { ErrorNotice, Loading } from '../../components/notice.js'
import { TableHeadWithActions } from '../../components/table-head.js'
import { TableScroll } from '../../components/table-scroll.js'
import { formatDateTime } from '../../lib/format.js'
import { navigate } from '../../lib/router.js'
import { useLoader } from '../../lib/use-loader.js'
import { TransferDialog } from './transfer-dialog.js'

interface MembersPanelProps {
  site: Site
  /** The account looking, to tell its own row (Leave) from the others. */
  accountId: string
  /** Reads the site again: its role here, after the account changed its own. */
  onSiteChanged: () => void
}

/** The roles chosen and not saved, but one account's. */
function withoutRoleOf(chosen: Record<string, MemberRole>, accountId: string): Record<string, MemberRole> {
  return Object.fromEntries(Object.entries(chosen).filter(([id]) => id !== accountId))
}

/** What a member's new role lets them do, said in the dialog that confirms it. */
const roleChanges: Record<MemberRole, string> = {
  admin: 'they can change its settings, secret key, webhook and members: all but deleting it and handing it over',
  viewer: 'they will only read it, and the invitations they made are revoked',
}

/** A member's two-factor authentication as the owner and admins read it in the table. */
function twoFactorStateOf(member: SiteMember, site: Site): string {
  if (member.twoFactor === true) return 'on'
  return site.settings.requireTwoFactor && member.role !== 'owner' ? 'off (shut out)' : 'off'
}

interface TwoFactorRequirementProps {
  site: Site
  /** The members (not the owner) whose accounts have two-factor off, as the owner and admins read them. */
  withoutTwoFactor: SiteMember[]
  isBusy: boolean
  onChange: (required: boolean) => void
}

/**
 * Whether the site requires two-factor authentication of its members: the owner's to change
 * (with two-factor on for its own account, which the API checks), said to everyone else.
 */
function TwoFactorRequirement({ site, withoutTwoFactor, isBusy, onChange }: TwoFactorRequirementProps) {
  const required = site.settings.requireTwoFactor
  const shutOut = withoutTwoFactor.map((member) => member.email).join(', ')
  return (
    <section class="member-requirement" aria-labelledby="two-factor-requirement-heading">
      <h3 id="two-factor-requirement-heading">Two-factor authentication</h3>
      <p>
        {required
          ? 'Members reach this site only with two-factor authentication on their accounts; those without it are shut out until they turn it on.'
          : 'Members reach this site whether or not their accounts have two-factor authentication on.'}
        {site.role === 'owner' ? null : ' Only the owner can change this.'}
      </p>
      {withoutTwoFactor.length === 0 ? null : (
        <p class={required ? 'notice notice--warning' : 'hint'}>
          Without two-factor: {shutOut}.{required ? '' : ' Requiring it shuts them out until they turn it on.'}
        </p>
      )}
      {site.role === 'owner' ? (
        <BusyButton type="button" class={required ? 'button' : 'button button--primary'} isBusy={isBusy} onClick={() => onChange(!required)}>
          {required ? 'Stop requiring two-factor of members' : 'Require two-factor of members'}
        </BusyButton>
      ) : null}
    </section>
  )
}

/** A role chosen for another member, waiting for its confirmation. */
interface RoleChange {
  member: SiteMember
  role: MemberRole
}

/** Who an invitation is for, in its row and in the name of its Revoke button. */
function invitationTarget(invitation: SiteInvitation): string {
  return `${invitation.email ?? 'anyone with the link'} as ${invitation.role}`
}

interface RowDialogProps<Target> {
  title: string
  confirmLabel: string
  /** The row the dialog is about; open while there is one. */
  target: Target | undefined
  isBusy: boolean
  confirmTone?: 'danger' | 'primary'
  onConfirm: (target: Target) => void
  onCancel: () => void
  children: (target: Target) => ComponentChildren
}

/** A ConfirmDialog about one row of the panel (a member, an invitation). */
function RowDialog<Target>({ target, onConfirm, children, ...props }: RowDialogProps<Target>) {
  return (
    <ConfirmDialog
      {...props}
      isOpen={target !== undefined}
      onConfirm={() => {
        if (target !== undefined) onConfirm(target)
      }}
    >
      {target === undefined ? null : children(target)}
    </ConfirmDialog>
  )
}

/**
 * Who the site is shared with; the owner and admins invite, change roles and remove; members
 * leave; the owner makes a member the owner. Each change of someone's access (a role saved, a
 * removal, a revocation, leaving, the transfer) is confirmed first, naming whom it concerns; a
 * role is chosen, then saved.
 */
export function MembersPanel({ site, accountId, onSiteChanged }: MembersPanelProps) {
  const canManage = site.role !== 'viewer'
  const loadMembers = useCallback(() => listMembers(site.id), [site.id])
  const [members, reloadMembers] = useLoader(loadMembers, site.id)
  const loadInvitations = useCallback(() => (canManage ? listInvitations(site.id) : Promise.resolve([])), [site.id, canManage])
  const [invitations, reloadInvitations] = useLoader(loadInvitations, `${site.id}:${String(canManage)}`)
  const [created, setCreated] = useState<CreatedInvitation | undefined>(undefined)
  const [role, setRole] = useState<MemberRole>('viewer')
  const [email, setEmail] = useState('')
  /** Roles chosen in the table and not saved yet, by account. */
  const [chosenRoles, setChosenRoles] = useState<Record<string, MemberRole>>({})
  /** Roles saved since the list was last loaded, by account: shown over the list's until it is loaded again. */
  const [savedRoles, setSavedRoles] = useState<Record<string, MemberRole>>({})
  // A list loaded after the save has the saved roles (or a later change's): it is shown as it is.
  useEffect(() => setSavedRoles({}), [members.data])
  const [error, setError] = useState<unknown>(undefined)
  const [isBusy, setIsBusy] = useState(false)
  const [isLeaving, setIsLeaving] = useState(false)
  const [removing, setRemoving] = useState<SiteMember | undefined>(undefined)
  const [revoking, setRevoking] = useState<SiteInvitation | undefined>(undefined)
  const [isDemotingSelf, setIsDemotingSelf] = useState(false)
  const [changingRole, setChangingRole] = useState<RoleChange | undefined>(undefined)
  const [transferringTo, setTransferringTo] = useState<SiteMember | undefined>(undefined)
  const isOwner = site.role === 'owner'
  /** An admin's invitation without an address: anyone holding the link may accept it, which the form warns of. */
  const isOpenAdminLink = role === 'admin' && email.trim() === ''
  const heading = useRef<HTMLHeadingElement>(null)

  const act = async (action: () => Promise<unknown>): Promise<boolean> => {
    setError(undefined)
    setIsBusy(true)
    try {
      await action()
      reloadMembers()
      reloadInvitations()
      return true
    } catch (caught) {
      setError(caught)
      return false
    } finally {
      setIsBusy(false)
    }
  }
  /** A confirmed action: the dialog closes whatever the outcome (an error shows on the page, which the modal covers). */
  const confirmed = async (action: () => Promise<unknown>, close: () => void) => {
    // The row whose button opened the dialog goes: focus goes to the heading rather than the page's start.
    if (await act(action)) focusAfterDialog(heading)
    close()
  }
  const invite = (event: Event) => {
    event.preventDefault()
    void act(async () => {
      setCreated(await createInvitation(site.id, email.trim() === '' ? { role } : { role, email: email.trim() }))
      setEmail('')
    })
  }
  const saveRole = async (member: SiteMember, chosen: MemberRole): Promise<boolean> => {
    const isSaved = await act(async () => {
      const saved = await changeMemberRole(site.id, member.accountId, chosen)
      // The role the API saved shows until the list is read again: the list as loaded before would
      // put the old role back in the select for a moment.
      setSavedRoles((current) => ({ ...current, [member.accountId]: saved.role as MemberRole }))
      setChosenRoles((current) => withoutRoleOf(current, member.accountId))
    })
    // The page's offers follow the account's own new role: a viewer's changes would get a 403.
    if (isSaved && member.accountId === accountId) onSiteChanged()
    return isSaved
  }
  /** A role chosen is dropped: its select shows the saved one again. */
  const forgetChosenRole = (member: SiteMember) => setChosenRoles((current) => withoutRoleOf(current, member.accountId))
  const changeRole = async ({ member, role: chosen }: RoleChange) => {
    // Its Save role button goes with the change: focus goes to the heading.
    if (await saveRole(member, chosen)) focusAfterDialog(heading)
    setChangingRole(undefined)
  }
  const transferred = () => {
    setTransferringTo(undefined)
    // Its Make owner button goes with the owner's role: focus goes to the heading.
    focusAfterDialog(heading)
    setError(undefined)
    reloadMembers()
    reloadInvitations()
    // The page's offers follow: an admin is offered no Delete site, no Make owner.
    onSiteChanged()
  }
  const demoteSelf = async () => {
    const self = members.data?.find((member) => member.accountId === accountId)
    // Its select and Save role button go with the admin role: focus goes to the heading.
    if (self !== undefined && (await saveRole(self, 'viewer'))) focusAfterDialog(heading)
    setIsDemotingSelf(false)
  }
  const leave = () =>
    void act(async () => {
      await removeMember(site.id, accountId)
      navigate({ name: 'sites' }, { replace: true })
    }).then((hasLeft) => {
      if (!hasLeft) setIsLeaving(false)
    })

  const requireTwoFactor = (required: boolean) =>
    void act(async () => {
      await updateSite(site.id, { settings: { requireTwoFactor: required } })
      onSiteChanged()
    })

  if (members.data === undefined) return members.status === 'error' ? <ErrorNotice error={members.error} /> : <Loading />
  // The owner and admins read whether each member has two-factor on; viewers do not.
  const showsTwoFactor = members.data.some((member) => member.twoFactor !== undefined)
  const withoutTwoFactor = members.data.filter((member) => member.role !== 'owner' && member.twoFactor === false)
  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading" ref={heading} tabIndex={-1}>
        Members
      </h2>
      {error === undefined ? null : <ErrorNotice error={error} />}
      <TableScroll title="Members">
        <table class="table">
          <TableHeadWithActions columns={showsTwoFactor ? ['E-mail', 'Role', 'Two-factor', 'Since'] : ['E-mail', 'Role', 'Since']} />
          <tbody>
            {members.data.map((member) => {
              const chosen = chosenRoles[member.accountId]
              const isOwnRow = member.accountId === accountId
              const savedRole = member.role === 'owner' ? member.role : (savedRoles[member.accountId] ?? member.role)
              return (
                <tr key={member.accountId}>
                  <td>{member.email}</td>
                  <td>
                    {canManage && member.role !== 'owner' ? (
                      <span class="input-row">
                        <select
                          class="member-role"
                          aria-label={`Role of ${member.email}`}
                          value={chosen ?? savedRole}
                          onChange={(event) => {
                            const value = event.currentTarget.value as MemberRole
                            setChosenRoles((current) => ({ ...current, [member.accountId]: value }))
                          }}
                        >
                          <option value="admin">admin</option>
                          <option value="viewer">viewer</option>
                        </select>
                        {chosen === undefined || chosen === savedRole ? null : (
                          <BusyButton
                            type="button"
                            class="button button--small"
                            aria-label={`Save role for ${member.email}: ${chosen}`}
                            isBusy={isBusy}
                            // Making oneself a viewer cannot be undone from here: another admin or the owner must.
                            onClick={() => (isOwnRow && chosen === 'viewer' ? setIsDemotingSelf(true) : setChangingRole({ member, role: chosen }))}
                          >
                            Save role
                          </BusyButton>
                        )}
                      </span>
                    ) : (
                      savedRole
                    )}
                  </td>
                  {showsTwoFactor ? <td>{twoFactorStateOf(member, site)}</td> : null}
                  <td class="nowrap">{formatDateTime(member.since)}</td>
                  <td>
                    {member.role === 'owner' ? null : isOwnRow ? (
                      <button type="button" class="button button--small button--danger" onClick={() => setIsLeaving(true)}>
                        Leave this site
                      </button>
                    ) : canManage ? (
                      <span class="input-row">
                        {isOwner ? (
                          <button type="button" class="button button--small" onClick={() => setTransferringTo(member)}>
                            Make owner<span class="visually-hidden"> {member.email}</span>
                          </button>
                        ) : null}
                        <button type="button" class="button button--small button--danger-outline" onClick={() => setRemoving(member)}>
                          Remove<span class="visually-hidden"> {member.email}</span>
                        </button>
                      </span>
                    ) : null}
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </TableScroll>
      <TwoFactorRequirement site={site} withoutTwoFactor={withoutTwoFactor} isBusy={isBusy} onChange={requireTwoFactor} />
      <ConfirmDialog title="Leave this site?" confirmLabel="Leave" isOpen={isLeaving} isBusy={isBusy} onConfirm={leave} onCancel={() => setIsLeaving(false)}>
        <p>You will no longer see {site.name}; its owner or an admin can invite you again.</p>
      </ConfirmDialog>
      <RowDialog
        title="Remove this member?"
        confirmLabel="Remove member"
        target={removing}
        isBusy={isBusy}
        onConfirm={(member) => void confirmed(() => removeMember(site.id, member.accountId), () => setRemoving(undefined))}
        onCancel={() => setRemoving(undefined)}
      >
        {(member) => (
          <p>
            <strong>{member.email}</strong> loses {site.name} at once, and the invitations they made are revoked. Only a new invitation brings them back.
          </p>
        )}
      </RowDialog>
      <RowDialog
        title="Change this member's role?"
        confirmLabel="Change role"
        confirmTone="primary"
        target={changingRole}
        isBusy={isBusy}
        onConfirm={(change) => void changeRole(change)}
        onCancel={() => {
          if (changingRole !== undefined) forgetChosenRole(changingRole.member)
          setChangingRole(undefined)
        }}
      >
        {({ member, role: chosen }) => (
          <p>
            <strong>{member.email}</strong> becomes {chosen === 'admin' ? 'an' : 'a'} <strong>{chosen}</strong> of {site.name}: {roleChanges[chosen]}.
          </p>
        )}
      </RowDialog>
      {isOwner ? <TransferDialog site={site} member={transferringTo} onTransferred={transferred} onClose={() => setTransferringTo(undefined)} /> : null}
      <ConfirmDialog
        title="Make yourself a viewer?"
        confirmLabel="Make me a viewer"
        isOpen={isDemotingSelf}
        isBusy={isBusy}
        onConfirm={() => void demoteSelf()}
        onCancel={() => {
          setIsDemotingSelf(false)
          setChosenRoles((current) => withoutRoleOf(current, accountId))
        }}
      >
        <p>
          You will only read {site.name} from now on, and the invitations you made are revoked. Only its owner or another admin can make you an admin again.
        </p>
      </ConfirmDialog>
      {canManage ? (
        <>
          <h3>Invite</h3>
          <form class="form form--inline" onSubmit={invite}>
            <div class="field">
              <label for="invite-role">Role</label>
              <select id="invite-role" value={role} onChange={(event) => setRole(event.currentTarget.value as MemberRole)}>
                <option value="viewer">viewer (reads only)</option>
                <option value="admin">admin (all but deleting the site)</option>
              </select>
            </div>
            <div class="field">
              <label for="invite-email">Only for this e-mail address (optional)</label>
              <input
                id="invite-email"
                type="email"
                value={email}
                aria-describedby={isOpenAdminLink ? 'invite-open-admin' : undefined}
                onInput={(event) => setEmail(event.currentTarget.value)}
              />
            </div>
            <BusyButton type="submit" class="button button--primary" isBusy={isBusy}>
              Invite
            </BusyButton>
          </form>
          {isOpenAdminLink ? (
            <p id="invite-open-admin" class="notice notice--warning">
              Without an address, whoever holds the link (forwarded, or read in a chat) can accept it and become an admin of {site.name}. Enter the invitee's
              address so that only their account can accept it.
            </p>
          ) : null}
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
                  <button
                    type="button"
                    class="button button--small button--danger-outline"
                    aria-label={`Revoke the invitation for ${invitationTarget(invitation)}, expires ${formatDateTime(invitation.expiresAt)}`}
                    onClick={() => setRevoking(invitation)}
                  >
                    Revoke
                  </button>
                </li>
              ))}
            </ul>
          )}
          <RowDialog
            title="Revoke this invitation?"
            confirmLabel="Revoke invitation"
            target={revoking}
            isBusy={isBusy}
            onConfirm={(invitation) => void confirmed(() => revokeInvitation(site.id, invitation.id), () => setRevoking(undefined))}
            onCancel={() => setRevoking(undefined)}
          >
            {(invitation) => <p>The link for {invitationTarget(invitation)} stops working at once; whoever opens it is told it is revoked or used.</p>}
          </RowDialog>
        </>
      ) : null}
    </section>
  )
}
