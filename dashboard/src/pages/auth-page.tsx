import { useState } from 'preact/hooks'
import { createAccount, fetchCurrentAccount, fetchSignUpStatus, logIn } from '../api/accounts.js'
import { ApiRequestError, describeError } from '../api/client.js'
import type { Account } from '../api/types.js'
import { Field } from '../components/field.js'
import { Link } from '../components/link.js'
import { Notice } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { PasswordField } from '../components/password-field.js'
import { sortFieldErrors } from '../lib/field-errors.js'
import { focusFirstInvalidField } from '../lib/use-form-submit.js'
import { useLoader } from '../lib/use-loader.js'
import { Form } from '../components/form.js'

/** Whether the session cookie the log-in just set comes back with the next request. */
async function isSessionKept(): Promise<boolean> {
  return (await fetchCurrentAccount()) !== null
}

interface AuthPageProps {
  mode: 'login' | 'signup'
  onSignedIn: (account: Account) => void
  /** The session ended while the dashboard was open (expired, revoked, logged out elsewhere). */
  hasSessionExpired?: boolean
  /** The account was just deleted from this page. */
  hasDeletedAccount?: boolean
}

export function AuthPage({ mode, onSignedIn, hasSessionExpired = false, hasDeletedAccount = false }: AuthPageProps) {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [setupCode, setSetupCode] = useState('')
  const [isBusy, setBusy] = useState(false)
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({})
  const [generalError, setGeneralError] = useState<string | undefined>()
  const isSignup = mode === 'signup'
  // Until the answer comes (or if it cannot be had), sign-up is offered: the server still decides.
  const [signUpStatus] = useLoader(fetchSignUpStatus, 'sign-up')
  const isSignUpClosed = signUpStatus.status === 'ready' && !signUpStatus.data.open
  const needsSetupCode = isSignup && signUpStatus.status === 'ready' && signUpStatus.data.setupCodeRequired

  const submit = async () => {
    setBusy(true)
    setFieldErrors({})
    setGeneralError(undefined)
    try {
      const credentials = { email: email.trim(), password }
      // Sign-up creates the account; logging in right after sets the session cookie.
      if (isSignup) await createAccount(setupCode === '' ? credentials : { ...credentials, setupCode })
      const account = await logIn(credentials)
      // In production the session cookie is Secure: over plain http (but on localhost) the browser
      // drops it, and every next request would say the session ended. Said here, once, why.
      if (!(await isSessionKept())) {
        setGeneralError('You were logged in, but this browser did not keep the session cookie: in production, open the dashboard over HTTPS.')
        return
      }
      onSignedIn(account)
    } catch (error) {
      const sorted = error instanceof ApiRequestError ? sortFieldErrors(error.details, ['email', 'password', 'setupCode']) : undefined
      if (error instanceof ApiRequestError && error.code === 'email_taken') {
        setFieldErrors({ email: error.message })
        focusFirstInvalidField()
      } else if (sorted !== undefined && Object.keys(sorted.byField).length > 0) {
        setFieldErrors(sorted.byField)
        if (sorted.general.length > 0) setGeneralError(sorted.general.join(' '))
        focusFirstInvalidField()
      } else {
        setGeneralError(describeError(error))
      }
    } finally {
      setBusy(false)
    }
  }

  return (
    <main id="main" class="main main--narrow auth">
      <p class="auth__brand">Tollgate</p>
      <PageHeading title={isSignup ? 'Create your account' : 'Log in'} />
      {hasSessionExpired && generalError === undefined && !isSignup ? (
        <Notice tone="info">Your session has ended, so the last change was not saved. Log in to go on where you were.</Notice>
      ) : null}
      {hasDeletedAccount && generalError === undefined ? (
        <Notice tone="success">Your account and everything of it were deleted.</Notice>
      ) : null}
      {generalError === undefined ? null : <Notice tone="error">{generalError}</Notice>}
      {isSignup && isSignUpClosed ? (
        <Notice tone="info">Sign-ups are closed on this server. Ask its operator for an account.</Notice>
      ) : (
        <Form class="card form" onSubmit={() => void submit()}>
          <Field id="auth-email" label="E-mail address" error={fieldErrors.email}>
            {(control) => (
              <input
                {...control}
                type="email"
                name="email"
                autoComplete={isSignup ? 'email' : 'username'}
                required
                value={email}
                onInput={(event) => setEmail(event.currentTarget.value)}
              />
            )}
          </Field>
          <PasswordField
            id="auth-password"
            label="Password"
            name="password"
            isNew={isSignup}
            value={password}
            error={fieldErrors.password}
            onInput={setPassword}
          />
          {/* Also when the answer of GET /sign-up is missing but the service asked for the code. */}
          {needsSetupCode || (isSignup && fieldErrors.setupCode !== undefined) ? (
            <Field
              id="auth-setupCode"
              label="Setup code"
              error={fieldErrors.setupCode}
              hint="This server has no account yet. Its log shows the code at start, on the line “No account yet”: it makes sure the first account is its operator's."
            >
              {(control) => (
                <input
                  {...control}
                  name="setupCode"
                  autoComplete="off"
                  autoCapitalize="characters"
                  spellcheck={false}
                  required
                  value={setupCode}
                  onInput={(event) => setSetupCode(event.currentTarget.value)}
                />
              )}
            </Field>
          ) : null}
          <button type="submit" class="button button--primary button--block" disabled={isBusy}>
            {isBusy ? 'Please wait…' : isSignup ? 'Create account' : 'Log in'}
          </button>
        </Form>
      )}
      <p class="auth__switch">
        {isSignup ? (
          <>
            Have an account already? <Link to={{ name: 'login' }}>Log in</Link>
          </>
        ) : isSignUpClosed ? null : (
          <>
            New to Tollgate? <Link to={{ name: 'signup' }}>Create an account</Link>
          </>
        )}
      </p>
    </main>
  )
}
