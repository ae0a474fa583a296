import { useEffect, useRef, useState } from 'preact/hooks'
import { createAccount, fetchCurrentAccount, fetchSignUpStatus, logIn } from '../api/accounts.js'
import { ApiRequestError, describeError } from '../api/client.js'
import type { Account } from '../api/types.js'
import { canUsePasskeys, logInWithPasskey } from '../api/passkeys.js'
import { BusyButton } from '../components/busy-button.js'
import { CodeField } from '../components/code-field.js'
import { Field } from '../components/field.js'
import { Link } from '../components/link.js'
import { Notice } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { PasswordField } from '../components/password-field.js'
import { sortFieldErrors } from '../lib/field-errors.js'
import { cleanCode } from '../lib/two-factor.js'
import { focusFirstInvalidField } from '../lib/use-form-submit.js'
import { useLoader } from '../lib/use-loader.js'
import { Form } from '../components/form.js'

/** The second step of a log-in to an account with two-factor authentication: which code it asks for. */
type LogInCode = 'authenticator' | 'recovery'

/** What a wrong code (two_factor_invalid) is told, by the kind asked for. An authenticator code works once. */
const wrongCodeMessages: Record<LogInCode, string> = {
  authenticator: 'This is not the code your authenticator app shows now, or it was used already: enter the next one it shows.',
  recovery: 'This is not an unused recovery code of this account.',
}

interface PlacedErrors {
  fieldErrors: Record<string, string>
  generalError?: string
}

/** Where a failed log-in or sign-up is shown: beside the field it concerns, of those the step shows, or above the form. */
function placeError(error: unknown, logInCode: LogInCode | null): PlacedErrors {
  if (!(error instanceof ApiRequestError)) return { fieldErrors: {}, generalError: describeError(error) }
  if (error.code === 'email_taken') return { fieldErrors: { email: error.message } }
  if (error.code === 'two_factor_invalid' && logInCode !== null) return { fieldErrors: { code: wrongCodeMessages[logInCode] } }
  const fields = logInCode === null ? ['email', 'password', 'setupCode'] : ['code']
  const sorted = sortFieldErrors(error.details, fields)
  if (Object.keys(sorted.byField).length === 0) return { fieldErrors: {}, generalError: describeError(error) }
  return { fieldErrors: sorted.byField, ...(sorted.general.length > 0 ? { generalError: sorted.general.join(' ') } : {}) }
}

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
  /** An invitation link was opened in this tab: the log-in or sign-up goes on to it. */
  hasPendingInvitation?: boolean
}

export function AuthPage({ mode, onSignedIn, hasSessionExpired = false, hasDeletedAccount = false, hasPendingInvitation = false }: AuthPageProps) {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [setupCode, setSetupCode] = useState('')
  // The second step (null: not asked for) sends the password again, which stays in this state
  // only: never in storage or in the address.
  const [logInCode, setLogInCode] = useState<LogInCode | null>(null)
  const [code, setCode] = useState('')
  const emailInput = useRef<HTMLInputElement>(null)
  const [isBusy, setBusy] = useState(false)
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({})
  const [generalError, setGeneralError] = useState<string | undefined>()
  const isSignup = mode === 'signup'
  // Until the answer comes (or if it cannot be had), sign-up is offered: the server still decides.
  const [signUpStatus] = useLoader(fetchSignUpStatus, 'sign-up')
  const isSignUpClosed = signUpStatus.status === 'ready' && !signUpStatus.data.open
  const needsSetupCode = isSignup && signUpStatus.status === 'ready' && signUpStatus.data.setupCodeRequired

  const submit = async () => {
    if (logInCode !== null && cleanCode(code) === '') {
      setFieldErrors({ code: logInCode === 'recovery' ? 'Enter one of your recovery codes.' : 'Enter the code your authenticator app shows.' })
      focusFirstInvalidField()
      return
    }
    setBusy(true)
    setFieldErrors({})
    setGeneralError(undefined)
    try {
      const credentials = { email: email.trim(), password }
      // Sign-up creates the account; logging in right after sets the session cookie.
      if (isSignup) await createAccount(setupCode === '' ? credentials : { ...credentials, setupCode })
      const account = await logIn(logInCode === null ? credentials : { ...credentials, code: cleanCode(code) })
      // In production the session cookie is Secure: over plain http (but on localhost) the browser
      // drops it, and every next request would say the session ended. Said here, once, why.
      if (!(await isSessionKept())) {
        setGeneralError('You were logged in, but this browser did not keep the session cookie: in production, open the dashboard over HTTPS.')
        return
      }
      onSignedIn(account)
    } catch (error) {
      // The password was right: the second step asks for the code (its field takes the focus).
      if (error instanceof ApiRequestError && error.code === 'two_factor_required') {
        setCode('')
        setLogInCode('authenticator')
        return
      }
      // The server checks the password again before the code: changed meanwhile (or the account
      // gone), it is the first step's to correct, where the password field is.
      if (error instanceof ApiRequestError && error.code === 'invalid_credentials' && logInCode !== null) {
        backToPassword()
        setGeneralError(describeError(error))
        return
      }
      const placed = placeError(error, logInCode)
      setFieldErrors(placed.fieldErrors)
      setGeneralError(placed.generalError)
      if (Object.keys(placed.fieldErrors).length > 0) focusFirstInvalidField()
    } finally {
      setBusy(false)
    }
  }

  /** A passkey stands for the password and the code together: no second step follows it. */
  const logInWithAPasskey = async () => {
    setBusy(true)
    setFieldErrors({})
    setGeneralError(undefined)
    try {
      const account = await logInWithPasskey()
      if (!(await isSessionKept())) {
        setGeneralError('You were logged in, but this browser did not keep the session cookie: in production, open the dashboard over HTTPS.')
        return
      }
      onSignedIn(account)
    } catch (error) {
      setGeneralError(describeError(error))
    } finally {
      setBusy(false)
    }
  }

  const switchCode = () => {
    setCode('')
    setFieldErrors({})
    setGeneralError(undefined)
    setLogInCode(logInCode === 'recovery' ? 'authenticator' : 'recovery')
  }
  function backToPassword() {
    setCode('')
    setFieldErrors({})
    setGeneralError(undefined)
    setLogInCode(null)
    // After the render that brings the e-mail field back.
    window.requestAnimationFrame(() => emailInput.current?.focus())
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
      {hasPendingInvitation ? <InvitationNotice canSignUp={!isSignUpClosed} /> : null}
      {generalError === undefined ? null : <Notice tone="error">{generalError}</Notice>}
      {isSignup && isSignUpClosed ? (
        <Notice tone="info">Sign-ups are closed on this server. Ask its operator for an account.</Notice>
      ) : logInCode !== null ? (
        <Form class="card form" onSubmit={() => void submit()}>
          {/* For password managers: the account the code is for. */}
          <input type="email" name="username" autoComplete="username" value={email} hidden readOnly />
          <p class="auth__step">
            Two-factor authentication is on for <strong>{email.trim()}</strong>.
          </p>
          <LogInCodeField kind={logInCode} value={code} error={fieldErrors.code} onInput={setCode} />
          <BusyButton type="submit" class="button button--primary button--block" isBusy={isBusy}>
            {isBusy ? 'Please wait…' : 'Log in'}
          </BusyButton>
          <div class="auth__alternatives">
            <button type="button" class="button button--small" onClick={switchCode}>
              {logInCode === 'recovery' ? 'Use your authenticator app instead' : 'Use a recovery code instead'}
            </button>
            <button type="button" class="button button--small" onClick={backToPassword}>
              Back to e-mail and password
            </button>
          </div>
        </Form>
      ) : (
        <Form class="card form" onSubmit={() => void submit()}>
          <Field id="auth-email" label="E-mail address" error={fieldErrors.email}>
            {(control) => (
              <input
                {...control}
                ref={emailInput}
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
          <BusyButton type="submit" class="button button--primary button--block" isBusy={isBusy}>
            {isBusy ? 'Please wait…' : isSignup ? 'Create account' : 'Log in'}
          </BusyButton>
          {isSignup || !canUsePasskeys() ? null : (
            <BusyButton type="button" class="button button--block" isBusy={isBusy} onClick={() => void logInWithAPasskey()}>
              Log in with a passkey
            </BusyButton>
          )}
        </Form>
      )}
      <p class="auth__switch">
        {isSignup ? (
          <>
            Have an account already? <Link to={{ name: 'login' }}>Log in</Link>
          </>
        ) : isSignUpClosed || logInCode !== null ? null : (
          <>
            New to Tollgate? <Link to={{ name: 'signup' }}>Create an account</Link>
          </>
        )}
      </p>
    </main>
  )
}

/**
 * Said while an invitation link waits for the log-in or sign-up. The invitation cannot be read
 * before (its preview is a session's), so this says what holds for both kinds: one bound to an
 * e-mail address only that address's account can accept, one that is not any account can.
 */
function InvitationNotice({ canSignUp }: { canSignUp: boolean }) {
  const how = canSignUp ? 'Log in or create an account' : 'Log in'
  return (
    <Notice tone="info">
      You have been invited to a site on Tollgate. {how} to accept it. If the invitation was sent to your e-mail address, use that address: only its
      account can accept it.
    </Notice>
  )
}

interface LogInCodeFieldProps {
  kind: LogInCode
  value: string
  error: string | undefined
  onInput: (value: string) => void
}

/**
 * The second step's field. It takes the focus when it appears and when the other kind of code is
 * chosen: a screen reader then reads its label and hint, which say what to enter.
 */
function LogInCodeField({ kind, value, error, onInput }: LogInCodeFieldProps) {
  const input = useRef<HTMLInputElement>(null)
  useEffect(() => input.current?.focus(), [kind])
  return <CodeField id="auth-code" kind={kind} value={value} error={error} onInput={onInput} inputRef={input} />
}
