import { useState } from 'preact/hooks'
import { changePassword, deleteAccount, endSession, listSessions, logOutOtherSessions } from '../api/accounts.js'
import type { Account, Session } from '../api/types.js'
import { ConfirmDialog } from '../components/confirm-dialog.js'
import { ErrorNotice, Loading, Notice } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { PasswordConfirmationForm } from '../components/password-confirmation-form.js'
import { PasswordField } from '../components/password-field.js'
import { describeUserAgent, formatDateTime } from '../lib/format.js'
import { useFormSubmit } from '../lib/use-form-submit.js'
import { useLoader, type Loaded } from '../lib/use-loader.js'
import { Form } from '../components/form.js'
import { BusyButton } from '../components/busy-button.js'
import { useStepUpCode, useTwoFactorGate, type TwoFactorGate } from '../components/step-up-code.js'
import { TableHeadWithActions } from '../components/table-head.js'
import { PasskeysSection } from './account/passkeys-section.js'
import { TwoFactorSection } from './account/two-factor-section.js'
import { TableScroll } from '../components/table-scroll.js'

interface AccountPageProps {
  account: Account
  /** Called once the account is deleted (its session ended with it). */
  onDeleted: () => void
}

export function AccountPage({ account, onDeleted }: AccountPageProps) {
  const [sessions, reloadSessions] = useLoader(listSessions, 'sessions')
  // One status for the section and the forms: turned on or off there, the forms ask for a code or not.
  const { status: twoFactorStatus, gate: twoFactor } = useTwoFactorGate()
  return (
    <>
      <PageHeading title="Account" />
      <p class="muted">
        Logged in as <strong>{account.email}</strong>.
      </p>
      {/* A password change ends the other sessions: the list must not keep offering to log them out.
          A recovery code it took is one fewer left, which the section says. */}
      <PasswordForm
        email={account.email}
        twoFactor={twoFactor}
        onChanged={() => {
          reloadSessions()
          twoFactor.reload()
        }}
      />
      <TwoFactorSection email={account.email} status={twoFactorStatus} reload={twoFactor.reload} />
      <PasskeysSection email={account.email} twoFactor={twoFactor} />
      <Sessions sessions={sessions} reload={reloadSessions} />
      <AccountDeletion email={account.email} twoFactor={twoFactor} onDeleted={onDeleted} />
    </>
  )
}

function Sessions({ sessions, reload }: { sessions: Loaded<Session[]>; reload: () => void }) {
  const [isBusy, setBusy] = useState(false)
  const [outcome, setOutcome] = useState<string | undefined>()
  const [error, setError] = useState<unknown>()
  const act = async (work: () => Promise<string>) => {
    setBusy(true)
    setError(undefined)
    setOutcome(undefined)
    try {
      setOutcome(await work())
    } catch (caught) {
      setError(caught)
    } finally {
      setBusy(false)
      reload()
    }
  }
  const endOthers = () =>
    act(async () => {
      const ended = await logOutOtherSessions()
      return ended === 0 ? 'You were not logged in anywhere else.' : `Logged out of ${ended} other ${ended === 1 ? 'session' : 'sessions'}.`
    })
  const end = (session: Session) =>
    act(async () => {
      await endSession(session.id)
      return `Logged out ${describeUserAgent(session.userAgent)}.`
    })
  return (
    <section class="card" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      {outcome === undefined ? null : <Notice tone="success">{outcome}</Notice>}
      {error === undefined ? null : <ErrorNotice error={error} />}
      {sessions.status === 'error' ? <ErrorNotice error={sessions.error} /> : null}
      {sessions.data === undefined ? (
        sessions.status === 'loading' ? <Loading /> : null
      ) : (
        <TableScroll title="Sessions">
          <table class="table sessions">
            <TableHeadWithActions columns={['Browser', 'Address', 'Logged in', 'Last active']} />
            <tbody>
              {sessions.data.map((session) => (
                <tr key={session.id} data-current={session.current ? 'true' : undefined}>
                  <th scope="row" title={session.userAgent ?? undefined}>
                    {describeUserAgent(session.userAgent)}
                    {session.current ? <span class="badge">This browser</span> : null}
                  </th>
                  <td class="code">{session.clientIp ?? 'Unknown'}</td>
                  <td class="nowrap">{formatDateTime(session.createdAt)}</td>
                  <td class="nowrap">{session.lastSeenAt === null ? 'Unknown' : formatDateTime(session.lastSeenAt)}</td>
                  <td>
                    {session.current ? null : (
                      <BusyButton
                        type="button"
                        class="button button--small"
                        isBusy={isBusy}
                        aria-label={`Log out ${describeUserAgent(session.userAgent)}, logged in ${formatDateTime(session.createdAt)}`}
                        onClick={() => void end(session)}
                      >
                        Log out
                      </BusyButton>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <div class="danger-row">
        <p class="muted">Ends every session of this account but this one: a browser left logged in elsewhere, or one that is not yours. API keys keep working.</p>
        <BusyButton type="button" class="button" onClick={() => void endOthers()} isBusy={isBusy}>
          {isBusy ? 'Logging out…' : 'Log out everywhere else'}
        </BusyButton>
      </div>
    </section>
  )
}

interface AccountDeletionProps {
  email: string
  twoFactor: TwoFactorGate
  onDeleted: () => void
}

function AccountDeletion({ email, twoFactor, onDeleted }: AccountDeletionProps) {
  const [isOpen, setOpen] = useState(false)
  const [password, setPassword] = useState('')
  const stepUp = useStepUpCode(twoFactor)
  const [state, run, resetOutcome] = useFormSubmit(['password', 'code'])
  const close = () => {
    setOpen(false)
    setPassword('')
    stepUp.reset()
    resetOutcome()
  }
  const remove = () =>
    run(async () => {
      await stepUp.send((code) => deleteAccount(password, code))
      onDeleted()
      return 'Deleted.'
    })
  return (
    <section class="card card--danger" aria-labelledby="deletion-heading">
      <h2 id="deletion-heading">Delete the account</h2>
      <div class="danger-row">
        <p class="muted">
          Deletes the account with all its sites (their keys stop working at once), their settings, logs and deliveries, and
          your API keys. This cannot be undone.
        </p>
        <button type="button" class="button button--danger" onClick={() => setOpen(true)}>
          Delete account
        </button>
      </div>
      <ConfirmDialog
        title="Delete your account?"
        confirmLabel="Delete account"
        isOpen={isOpen}
        isBusy={state.isBusy}
        formId="deletion-form"
        onConfirm={() => void remove()}
        onCancel={close}
      >
        <p>
          <strong>{email}</strong> and everything of it will be deleted. Enter your password
          {twoFactor.isOn ? ' and a code' : ''} to confirm.
        </p>
        <PasswordConfirmationForm
          id="deletion-form"
          passwordId="deletion-password"
          password={password}
          onPassword={setPassword}
          state={state}
          codeField={stepUp.field('deletion-code', state.fieldErrors.code)}
          onSubmit={() => void remove()}
        />
      </ConfirmDialog>
    </section>
  )
}

interface PasswordFormProps {
  email: string
  twoFactor: TwoFactorGate
  onChanged: () => void
}

function PasswordForm({ email, twoFactor, onChanged }: PasswordFormProps) {
  const [currentPassword, setCurrentPassword] = useState('')
  const [newPassword, setNewPassword] = useState('')
  const stepUp = useStepUpCode(twoFactor)
  const [state, run] = useFormSubmit(['currentPassword', 'newPassword', 'code'])
  const submit = () =>
    run(async () => {
      await stepUp.send((code) => changePassword(currentPassword, newPassword, code))
      setCurrentPassword('')
      setNewPassword('')
      stepUp.reset()
      onChanged()
      return 'Your password was changed. Your other sessions were logged out; your API keys and passkeys still work.'
    })
  return (
    <section class="card" aria-labelledby="password-heading">
      <h2 id="password-heading">Change your password</h2>
      {state.successMessage === undefined ? null : <Notice tone="success">{state.successMessage}</Notice>}
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <Form class="form" onSubmit={() => void submit()}>
        {/* For password managers: the account the new password belongs to. */}
        <input type="email" name="username" autoComplete="username" value={email} hidden readOnly />
        <PasswordField
          id="current-password"
          label="Current password"
          name="current-password"
          isNew={false}
          hint="A new password logs your other sessions out. Your passkeys and API keys keep working: remove any you no longer trust."
          value={currentPassword}
          error={state.fieldErrors.currentPassword}
          onInput={setCurrentPassword}
        />
        <PasswordField
          id="new-password"
          label="New password"
          name="new-password"
          isNew
          value={newPassword}
          error={state.fieldErrors.newPassword}
          onInput={setNewPassword}
        />
        {/* Last: an authenticator code lasts 30 seconds, so it is typed just before the change is sent. */}
        {stepUp.field('password-change-code', state.fieldErrors.code)}
        <div class="form__actions">
          <BusyButton type="submit" class="button button--primary" isBusy={state.isBusy}>
            {state.isBusy ? 'Changing…' : 'Change password'}
          </BusyButton>
        </div>
      </Form>
    </section>
  )
}
