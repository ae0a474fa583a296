import { useState } from 'preact/hooks'
import { createApiKey } from '../../api/api-keys.js'
import type { ApiKeyAccess, CreatedApiKey } from '../../api/types.js'
import { BusyButton } from '../../components/busy-button.js'
import { Field } from '../../components/field.js'
import { Form } from '../../components/form.js'
import { Notice } from '../../components/notice.js'
import { PasswordField } from '../../components/password-field.js'
import { useStepUpCode, type TwoFactorGate } from '../../components/step-up-code.js'
import { DEFAULT_EXPIRY, expiresAtOf, expiryChoices, type ExpiryChoice } from '../../lib/api-keys.js'
import { useFormSubmit } from '../../lib/use-form-submit.js'
import { AccessChoices } from './access-choices.js'

interface CreateKeyFormProps {
  /** The account's, for password managers: the account the password asked for belongs to. */
  email: string
  twoFactor: TwoFactorGate
  onCreated: (key: CreatedApiKey) => void
}

/**
 * A key acts as its account, so creating one asks for the password and, while two-factor
 * authentication is on, a code, as changing the password does: a session left open, or taken,
 * cannot mint a lasting credential with it alone.
 */
export function CreateKeyForm({ email, twoFactor, onCreated }: CreateKeyFormProps) {
  const [name, setName] = useState('')
  const [access, setAccess] = useState<ApiKeyAccess>('full')
  const [expiry, setExpiry] = useState<ExpiryChoice>(DEFAULT_EXPIRY)
  const [password, setPassword] = useState('')
  const stepUp = useStepUpCode(twoFactor)
  const [state, run] = useFormSubmit(['name', 'access', 'expiresAt', 'password', 'code'])
  const submit = () =>
    run(async () => {
      // The expiry counts from the submission, not from when the choice was made.
      const expiresAt = expiresAtOf(expiry, new Date())
      const created = await stepUp.send((code) => createApiKey({ name: name.trim(), access, expiresAt, password, code }))
      setName('')
      setAccess('full')
      setExpiry(DEFAULT_EXPIRY)
      setPassword('')
      stepUp.reset()
      onCreated(created)
      return 'The key was created.'
    })
  return (
    <section class="card" aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create a key</h2>
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <Form class="form" onSubmit={() => void submit()}>
        <input type="email" name="username" autoComplete="username" value={email} hidden readOnly />
        <div class="form__grid">
          <Field id="api-key-name" label="Name" error={state.fieldErrors.name} hint="What uses it, for example “deploy script”.">
            {(control) => <input {...control} name="name" required maxLength={100} value={name} onInput={(event) => setName(event.currentTarget.value)} />}
          </Field>
          <Field id="api-key-expiry" label="Expires" error={state.fieldErrors.expiresAt} hint="An expired key is refused (401), and stays listed until revoked.">
            {(control) => (
              <select {...control} name="expiry" value={expiry} onChange={(event) => setExpiry(event.currentTarget.value as ExpiryChoice)}>
                {expiryChoices.map((choice) => (
                  <option key={choice.value} value={choice.value}>
                    {choice.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <AccessChoices value={access} error={state.fieldErrors.access} onChange={setAccess} />
        <div class="form__grid">
          <PasswordField
            id="api-key-password"
            label="Password"
            name="password"
            isNew={false}
            hint="A key acts as your account: your password confirms that you are the one creating it."
            value={password}
            error={state.fieldErrors.password}
            onInput={setPassword}
          />
          {/* Last: an authenticator code lasts 30 seconds, so it is typed just before the key is created. */}
          {stepUp.field('api-key-code', state.fieldErrors.code)}
        </div>
        <div class="form__actions">
          <BusyButton type="submit" class="button button--primary" isBusy={state.isBusy}>
            {state.isBusy ? 'Creating…' : 'Create key'}
          </BusyButton>
        </div>
      </Form>
    </section>
  )
}
