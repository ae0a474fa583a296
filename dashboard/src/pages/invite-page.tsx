import { useCallback, useState } from 'preact/hooks'
import { ApiRequestError, describeError } from '../api/client.js'
import { acceptInvitation, previewInvitation } from '../api/members.js'
import type { Account } from '../api/types.js'
import { ErrorNotice, Loading, Notice } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { BusyButton } from '../components/busy-button.js'
import { Link } from '../components/link.js'
import { formatDateTime } from '../lib/format.js'
import { forgetInvitation, pendingInvitation } from '../lib/pending-invitation.js'
import { navigate } from '../lib/router.js'
import { useLoader } from '../lib/use-loader.js'

interface InvitePageProps {
  account: Account
  /** Logs out, the invitation kept: the log-in that follows comes back here. */
  onLogOut: () => Promise<void>
}

/** For the page's hint only: the API compares addresses in any case and Unicode form, and decides. */
function sameAddress(first: string, second: string): boolean {
  return first.normalize('NFKC').toLowerCase() === second.normalize('NFKC').toLowerCase()
}

/** The API's 403 for an invitation bound to another account's address. */
function isForAnotherAccount(error: unknown): boolean {
  return error instanceof ApiRequestError && error.status === 403
}

/** An invitation link opened: what it is for, then Accept (opens the site) or Decline. */
export function InvitePage({ account, onLogOut }: InvitePageProps) {
  const [token] = useState(pendingInvitation)
  const load = useCallback(() => (token === undefined ? Promise.resolve(undefined) : previewInvitation(token)), [token])
  const [preview] = useLoader(load, token ?? '')
  const [isBusy, setIsBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)

  if (token === undefined) {
    return (
      <>
        <PageHeading title="Invitation" />
        <p>There is no invitation to accept here: open the link you were sent again.</p>
        <Link to={{ name: 'sites' }}>Your sites</Link>
      </>
    )
  }
  if (preview.data === undefined) {
    return preview.status === 'error' ? (
      <>
        <PageHeading title="Invitation" />
        <ErrorNotice error={preview.error} />
        <Link to={{ name: 'sites' }}>Your sites</Link>
      </>
    ) : (
      <Loading />
    )
  }
  const { site, role, invitedBy, expiresAt, email } = preview.data
  const isForAnotherAddress = email !== null && !sameAddress(email, account.email)
  const accept = async () => {
    setIsBusy(true)
    try {
      const joined = await acceptInvitation(token)
      forgetInvitation()
      navigate({ name: 'site', siteId: joined.id, tab: 'analytics' }, { replace: true })
    } catch (caught) {
      setError(caught)
      setIsBusy(false)
    }
  }
  const logOutForAnotherAccount = () => {
    setIsBusy(true)
    // The invitation stays in this tab's storage: the log-in or sign-up that follows comes back to it.
    onLogOut().catch((caught: unknown) => {
      setError(caught)
      setIsBusy(false)
    })
  }
  const decline = () => {
    forgetInvitation()
    navigate({ name: 'sites' }, { replace: true })
  }
  return (
    <>
      <PageHeading title="Invitation" />
      <p class="invitation-summary">
        Join <strong>{site.name}</strong> as {role}, invited by {invitedBy}.
      </p>
      <p class="hint">
        {role === 'viewer' ? 'A viewer reads the site, its analytics and logs, and changes nothing.' : 'An admin may do everything on the site but delete it.'} The
        link works until {formatDateTime(expiresAt)}.
      </p>
      {email === null ? null : (
        <p>
          Only the account of <strong>{email}</strong> can accept it.
        </p>
      )}
      {isForAnotherAccount(error) || isForAnotherAddress ? (
        <Notice tone={isForAnotherAccount(error) ? 'error' : 'warning'}>
          <p>{isForAnotherAccount(error) ? describeError(error) : `This invitation is for another e-mail address: you are logged in as ${account.email}.`}</p>
          <p>Log out, then log in or sign up with the address it is for: the invitation is kept in this tab.</p>
          <button type="button" class="button" onClick={logOutForAnotherAccount} disabled={isBusy}>
            Log out and use another account
          </button>
        </Notice>
      ) : error === undefined ? null : (
        <ErrorNotice error={error} />
      )}
      <div class="actions">
        <BusyButton type="button" class="button button--primary" isBusy={isBusy} onClick={() => void accept()}>
          Accept
        </BusyButton>
        <button type="button" class="button" onClick={decline} disabled={isBusy}>
          Decline
        </button>
      </div>
    </>
  )
}
