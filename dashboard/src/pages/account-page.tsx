import { useState } from 'preact/hooks'
import { changePassword } from '../api/accounts.js'
import type { Account } from '../api/types.js'
import { Notice } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { PasswordField } from '../components/password-field.js'
import { useFormSubmit } from '../lib/use-form-submit.js'

export function AccountPage({ account }: { account: Account }) {
  return (
    <>
      <PageHeading title="Account" />
      <p class="muted">
        Logged in as <strong>{account.email}</strong>.
      </p>
      <PasswordForm email={account.email} />
    </>
  )
}

function PasswordForm({ email }: { email: string }) {
  const [currentPassword, setCurrentPassword] = useState('')
  const [newPassword, setNewPassword] = useState('')
  const [state, run] = useFormSubmit(['currentPassword', 'newPassword'])
  const submit = () =>
    run(async () => {
      await changePassword(currentPassword, newPassword)
      setCurrentPassword('')
      setNewPassword('')
      return 'Your password was changed. Your other sessions were logged out; your API keys still work.'
    })
  return (
    <section class="card" aria-labelledby="password-heading">
      <h2 id="password-heading">Change your password</h2>
      {state.successMessage === undefined ? null : <Notice tone="success">{state.successMessage}</Notice>}
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          void submit()
        }}
      >
        {/* For password managers: the account the new password belongs to. */}
        <input type="email" name="username" autoComplete="username" value={email} hidden readOnly />
        <PasswordField
          id="current-password"
          label="Current password"
          name="current-password"
          isNew={false}
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
        <div class="form__actions">
          <button type="submit" class="button button--primary" disabled={state.isBusy}>
            {state.isBusy ? 'Changing…' : 'Change password'}
          </button>
        </div>
      </form>
    </section>
  )
}
