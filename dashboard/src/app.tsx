import { useCallback, useEffect, useState } from 'preact/hooks'
import { fetchCurrentAccount, logOut } from './api/accounts.js'
import { ApiRequestError, onUnauthorized } from './api/client.js'
import type { Account } from './api/types.js'
import { Layout } from './components/layout.js'
import { ErrorNotice, Loading } from './components/notice.js'
import { pendingInvitation, takeInvitationFromAddress } from './lib/pending-invitation.js'
import { navigate, parseRoute, useRoute } from './lib/router.js'
import { InvitePage } from './pages/invite-page.js'
import { AccountPage } from './pages/account-page.js'
import { ActivityPage } from './pages/activity-page.js'
import { ApiKeysPage } from './pages/api-keys-page.js'
import { AuthPage } from './pages/auth-page.js'
import { NewSitePage } from './pages/new-site-page.js'
import { NotFoundPage } from './pages/not-found-page.js'
import { SitePage } from './pages/site-page.js'
import { SitesPage } from './pages/sites-page.js'

type Session =
  | { status: 'checking' }
  | { status: 'anonymous'; hasExpired?: boolean; hasDeletedAccount?: boolean }
  | { status: 'failed'; error: unknown }
  | { status: 'signed-in'; account: Account }

export function App() {
  // Before anything renders: the token leaves the address bar at once (lib/pending-invitation).
  useState(takeInvitationFromAddress)
  const route = useRoute()
  // Another invitation link opened in this tab while the dashboard is open (on /dashboard/invite,
  // say) changes only the hash, which reloads nothing: take the new token out of the address too,
  // and open the invitation page afresh for it (its key), after the log-in if there is one first.
  const [invitationGeneration, setInvitationGeneration] = useState(0)
  useEffect(() => {
    const takeNewInvitation = () => {
      if (!takeInvitationFromAddress()) return
      setInvitationGeneration((generation) => generation + 1)
      if (parseRoute(window.location.pathname).name !== 'invite') navigate({ name: 'invite' }, { replace: true })
    }
    window.addEventListener('hashchange', takeNewInvitation)
    return () => window.removeEventListener('hashchange', takeNewInvitation)
  }, [])
  const [session, setSession] = useState<Session>({ status: 'checking' })

  const checkSession = useCallback(() => {
    setSession({ status: 'checking' })
    fetchCurrentAccount().then(
      (account) => setSession(account === null ? { status: 'anonymous' } : { status: 'signed-in', account }),
      (error: unknown) => setSession({ status: 'failed', error }),
    )
  }, [])

  useEffect(checkSession, [checkSession])
  // An expired or revoked session anywhere sends the user back to the login form, on the same
  // page, saying why (what was not saved is not saved). Once signed out, a request that was still
  // on its way when the user logged out or deleted the account is answered 401 too: that says
  // nothing new, and must not replace what the page says about the log-out or the deletion.
  useEffect(
    () => onUnauthorized(() => setSession((current) => (current.status === 'signed-in' ? { status: 'anonymous', hasExpired: true } : current))),
    [],
  )

  const onSignedIn = useCallback((account: Account) => {
    setSession({ status: 'signed-in', account })
    // An invitation link opened logged out comes back to its page after the log-in or sign-up.
    if (pendingInvitation() !== undefined) navigate({ name: 'invite' }, { replace: true })
    else if (route.name === 'login' || route.name === 'signup') navigate({ name: 'sites' }, { replace: true })
  }, [route.name])

  // Only a log-out the service confirmed (or a session it no longer knows) signs the page out:
  // showing the log-in form after a failed one would tell a user on a shared computer they are
  // out while the cookie still works.
  const onLogOut = useCallback(async () => {
    try {
      await logOut()
    } catch (error) {
      if (!(error instanceof ApiRequestError && error.status === 401)) throw error
    }
    setSession({ status: 'anonymous' })
    navigate({ name: 'login' })
  }, [])

  const onAccountDeleted = useCallback(() => {
    setSession({ status: 'anonymous', hasDeletedAccount: true })
    navigate({ name: 'login' })
  }, [])

  if (session.status === 'checking') return <Loading label="Loading the dashboard…" />
  if (session.status === 'failed') {
    return (
      <main class="main main--narrow">
        <ErrorNotice error={session.error} />
        <button type="button" class="button" onClick={checkSession}>
          Retry
        </button>
      </main>
    )
  }
  if (session.status === 'anonymous') {
    return (
      <AuthPage
        // A page of its own per mode: a log-in's second step (and its password) does not carry over to a sign-up.
        key={route.name === 'signup' ? 'signup' : 'login'}
        mode={route.name === 'signup' ? 'signup' : 'login'}
        onSignedIn={onSignedIn}
        hasSessionExpired={session.hasExpired === true}
        hasDeletedAccount={session.hasDeletedAccount === true}
        hasPendingInvitation={pendingInvitation() !== undefined}
      />
    )
  }
  return (
    <Layout account={session.account} route={route} onLogOut={onLogOut}>
      {renderPage(session.account)}
    </Layout>
  )

  function renderPage(account: Account) {
    switch (route.name) {
      case 'login':
      case 'signup':
      case 'sites':
        return <SitesPage />
      case 'new-site':
        return <NewSitePage />
      case 'site':
        return <SitePage key={route.siteId} siteId={route.siteId} tab={route.tab} accountId={account.id} />
      case 'invite':
        return <InvitePage key={invitationGeneration} account={account} onLogOut={onLogOut} />
      case 'api-keys':
        return <ApiKeysPage email={account.email} />
      case 'activity':
        return <ActivityPage />
      case 'account':
        return <AccountPage account={account} onDeleted={onAccountDeleted} />
      case 'not-found':
        return <NotFoundPage />
    }
  }
}
