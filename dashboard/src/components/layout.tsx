import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { describeError } from '../api/client.js'
import type { Account } from '../api/types.js'
import type { Route } from '../lib/router.js'
import { BusyButton } from './busy-button.js'
import { Link } from './link.js'
import { Notice } from './notice.js'

interface LayoutProps {
  account: Account
  route: Route
  onLogOut: () => Promise<void>
  children: ComponentChildren
}

export function Layout({ account, route, onLogOut, children }: LayoutProps) {
  const [isLoggingOut, setLoggingOut] = useState(false)
  const [logOutError, setLogOutError] = useState<string | undefined>()
  const logOut = () => {
    setLoggingOut(true)
    setLogOutError(undefined)
    onLogOut().then(
      () => setLoggingOut(false),
      (error: unknown) => {
        setLoggingOut(false)
        setLogOutError(`Logging out failed, so you are still logged in. ${describeError(error)}`)
      },
    )
  }
  const isSitesSection = route.name === 'sites' || route.name === 'new-site' || route.name === 'site'
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <div class="topbar__inner">
          <Link to={{ name: 'sites' }} class="brand">
            Tollgate
          </Link>
          <nav aria-label="Main" class="topbar__nav">
            <Link to={{ name: 'sites' }} isCurrent={isSitesSection}>
              Sites
            </Link>
            <Link to={{ name: 'api-keys' }} isCurrent={route.name === 'api-keys'}>
              API keys
            </Link>
            <Link to={{ name: 'activity' }} isCurrent={route.name === 'activity'}>
              Activity
            </Link>
            <Link to={{ name: 'account' }} isCurrent={route.name === 'account'}>
              Account
            </Link>
          </nav>
          <div class="topbar__account">
            <span class="topbar__email" title={account.email}>
              {account.email}
            </span>
            <BusyButton type="button" class="button button--small button--ghost" onClick={logOut} isBusy={isLoggingOut}>
              Log out
            </BusyButton>
          </div>
        </div>
      </header>
      <main id="main" class="main" tabIndex={-1}>
        {logOutError === undefined ? null : <Notice tone="error">{logOutError}</Notice>}
        {children}
      </main>
    </>
  )
}
