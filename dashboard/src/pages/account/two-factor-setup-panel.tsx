import { useEffect, useRef, useState } from 'preact/hooks'
import { isConflict } from '../../api/client.js'
import type { TwoFactorSetup } from '../../api/types.js'
import { turnOnTwoFactor } from '../../api/two-factor.js'
import { BusyButton } from '../../components/busy-button.js'
import { CodeField } from '../../components/code-field.js'
import { Form } from '../../components/form.js'
import { Notice } from '../../components/notice.js'
import { PasswordField } from '../../components/password-field.js'
import { QrCode } from '../../components/qr-code.js'
import { SecretBox } from '../../components/secret-box.js'
import { cleanCode, groupSecretKey } from '../../lib/two-factor.js'
import { useFormSubmit } from '../../lib/use-form-submit.js'

interface TwoFactorSetupPanelProps {
  setup: TwoFactorSetup
  email: string
  /** Two-factor is on: the recovery codes, shown once. */
  onTurnedOn: (recoveryCodes: string[]) => void
  /** The setup expired or is not this account's any more: a new key is needed. */
  onRestart: () => void
  /** The new key is being fetched. */
  isRestarting: boolean
  /** Two-factor was turned on elsewhere in the meantime (409). */
  onConflict: (error: unknown) => void
  onCancel: () => void
}

/**
 * The key for the authenticator app (a QR code, and the same key to type in by hand), then its
 * first code with the current password. Nothing changes until that code is confirmed.
 */
export function TwoFactorSetupPanel({ setup, email, onTurnedOn, onRestart, isRestarting, onConflict, onCancel }: TwoFactorSetupPanelProps) {
  const [code, setCode] = useState('')
  const [password, setPassword] = useState('')
  const [state, run] = useFormSubmit(['code', 'password', 'setupToken'])
  const heading = useRef<HTMLHeadingElement>(null)
  // The Turn on button that opened the setup is gone: the keyboard starts at the first step.
  useEffect(() => heading.current?.focus(), [])
  const submit = () =>
    run(async () => {
      try {
        onTurnedOn(await turnOnTwoFactor({ setupToken: setup.setupToken, code: cleanCode(code), password }))
      } catch (error) {
        if (!isConflict(error)) throw error
        // The section says so in place of this setup, which is over.
        onConflict(error)
      }
      return ''
    })
  return (
    <div class="two-factor-setup">
      <h3 ref={heading} tabIndex={-1}>
        1. Add Tollgate to your authenticator app
      </h3>
      <p class="muted">
        Scan the QR code with an authenticator app on your phone, or type the setup key into it. The app then shows a new
        6-digit code every 30 seconds.
      </p>
      <div class="two-factor-setup__key">
        <QrCode text={setup.otpauthUri} label={`QR code for your authenticator app, of the key written out beside it, for ${email}`} />
        <div class="stack">
          <SecretBox
            id="two-factor-secret"
            label="Setup key"
            value={groupSecretKey(setup.secret)}
            copyText={setup.secret}
            hint="Typed in by hand: a time-based key (TOTP), SHA-1, 6 digits, 30 seconds, which are most apps' defaults."
          />
        </div>
      </div>
      <h3>2. Enter its code to turn two-factor on</h3>
      {state.fieldErrors.setupToken === undefined ? null : (
        <Notice tone="error">
          This setup has expired (after 15 minutes) or is no longer valid. Start again, and add the new key to your app in
          place of this one.{' '}
          <BusyButton type="button" class="button button--small" isBusy={isRestarting} onClick={onRestart}>
            {isRestarting ? 'Starting…' : 'Start again'}
          </BusyButton>
        </Notice>
      )}
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <Form class="form" onSubmit={() => void submit()}>
        {/* For password managers: the account the password is of. */}
        <input type="email" name="username" autoComplete="username" value={email} hidden readOnly />
        <CodeField id="two-factor-setup-code" kind="authenticator" value={code} error={state.fieldErrors.code} onInput={setCode} />
        <PasswordField
          id="two-factor-setup-password"
          label="Current password"
          name="current-password"
          isNew={false}
          value={password}
          error={state.fieldErrors.password}
          onInput={setPassword}
        />
        <div class="form__actions">
          <BusyButton type="submit" class="button button--primary" isBusy={state.isBusy}>
            {state.isBusy ? 'Turning on…' : 'Turn on two-factor authentication'}
          </BusyButton>
          <button type="button" class="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </Form>
    </div>
  )
}
