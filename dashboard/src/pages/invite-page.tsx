import { useCallback, useEffect, useState } from 'preact/hooks'
import { ApiRequestError } from '../api/client.js'
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

/** The API's 403 for an invitation bound to another account's address. */
function isForAnotherAccount(error: unknown): boolean {
  return error instanceof ApiRequestError && error.status === 403
}

/** The API's 404: the link is unknown, expired, revoked or used, for good. */
function isGone(error: unknown): boolean {
  return error instanceof ApiRequestError && error.status === 404
}

/**
 * An invitation link opened: what it is for and which account would join, then Accept (opens the
 * site) or Decline. A new link opened in this tab mounts the page afresh (App keys it).
 */
export function InvitePage({ account, onLogOut }: InvitePageProps) {
  const [token] = useState(pendingInvitation)
  const load = useCallback(() => (token === undefined ? Promise.resolve(undefined) : previewInvitation(token)), [token])
  const [preview, reloadPreview] = useLoader(load, token ?? '')
  const [isBusy, setIsBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  // A dead link is dropped from the tab: kept, every later log-in in this tab would come back here.
  const isPreviewGone = preview.status === 'error' && isGone(preview.error)
  useEffect(() => {
    if (isPreviewGone) forgetInvitation()
  }, [isPreviewGone])

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
        <div class="form__actions">
          {isPreviewGone ? null : (
            <button type="button" class="button" onClick={reloadPreview}>
              Retry
            </button>
          )}
          <Link to={{ name: 'sites' }} class="button">
            Go to your sites
          </Link>
        </div>
      </>
    ) : (
      <Loading />
    )
  }
  const { site, role, invitedBy, expiresAt, email, boundToEmail, forYou, twoFactorRequired } = preview.data
  const accept = async () => {
    setIsBusy(true)
    try {
      const joined = await acceptInvitation(token)
      forgetInvitation()
      navigate({ name: 'site', siteId: joined.id, tab: 'analytics' }, { replace: true })
    } catch (caught) {
      // Used or revoked since the preview: nothing left to come back to after a log-in.
      if (isGone(caught)) forgetInvitation()
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
  const canAccept = forYou && !isForAnotherAccount(error)
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
      {/* Said before Accept, so that nobody joins with the wrong one of their accounts. */}
      <p class="invitation-account">You are logged in as {account.email}.</p>
      {canAccept ? (
        boundToEmail && email !== null ? (
          <p>It is for your address, {email}: only this account can accept it.</p>
        ) : null
      ) : (
        // The address it is bound to is not shown: the link may have been forwarded to whoever holds it.
        <Notice tone="warning">
          <p>This invitation is for another account: only the account with the e-mail address it was sent to can accept it.</p>
          <p>Log out, then log in or sign up with that address: the invitation is kept in this tab.</p>
        </Notice>
      )}
      {twoFactorRequired ? (
        <p class="hint">
          Its owner requires two-factor authentication of every member: if your account does not have it on, <Link to={{ name: 'account' }}>turn it on under Account</Link>{' '}
          first, then open the invitation link again.
        </p>
      ) : null}
      {error === undefined || (isForAnotherAccount(error) && !forYou) ? null : <ErrorNotice error={error} />}
      <div class="form__actions">
        {canAccept ? (
          <BusyButton type="button" class="button button--primary" isBusy={isBusy} onClick={() => void accept()}>
            Accept
          </BusyButton>
        ) : null}
        <BusyButton type="button" class={canAccept ? 'button' : 'button button--primary'} isBusy={isBusy} onClick={logOutForAnotherAccount}>
          Log out and use another account
        </BusyButton>
        <BusyButton type="button" class="button" isBusy={isBusy} onClick={decline}>
          Decline
        </BusyButton>
      </div>
    </>
  )
}
