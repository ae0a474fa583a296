import { useCallback, useState } from 'preact/hooks'
import { acceptInvitation, previewInvitation } from '../api/members.js'
import { ErrorNotice, Loading } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { BusyButton } from '../components/busy-button.js'
import { Link } from '../components/link.js'
import { formatDateTime } from '../lib/format.js'
import { forgetInvitation, pendingInvitation } from '../lib/pending-invitation.js'
import { navigate } from '../lib/router.js'
import { useLoader } from '../lib/use-loader.js'

/** An invitation link opened: what it is for, then Accept (opens the site) or Decline. */
export function InvitePage() {
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
  const { site, role, invitedBy, expiresAt } = preview.data
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
      {error === undefined ? null : <ErrorNotice error={error} />}
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
