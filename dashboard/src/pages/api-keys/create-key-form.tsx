import { useState } from 'preact/hooks'
import { createApiKey } from '../../api/api-keys.js'
import { ApiRequestError } from '../../api/client.js'
import type { ApiKeyAccess, CreatedApiKey, Site } from '../../api/types.js'
import { BusyButton } from '../../components/busy-button.js'
import { Field } from '../../components/field.js'
import { Form } from '../../components/form.js'
import { Notice } from '../../components/notice.js'
import { PasswordField } from '../../components/password-field.js'
import { useStepUpCode, type TwoFactorGate } from '../../components/step-up-code.js'
import { allowedAddressesOf, DEFAULT_EXPIRY, expiresAtOf, expiryChoices, siteIdsOf, type ExpiryChoice, type SiteScope } from '../../lib/api-keys.js'
import { useFormSubmit } from '../../lib/use-form-submit.js'
import { AccessChoices } from './access-choices.js'
import { AddressesField } from './addresses-field.js'
import { SiteChoices } from './site-choices.js'

interface CreateKeyFormProps {
  /** The account's, for password managers: the account the password asked for belongs to. */
  email: string
  twoFactor: TwoFactorGate
  /** The account's sites, to make a key for some of them; undefined while they load. */
  sites: readonly Site[] | undefined
  onCreated: (key: CreatedApiKey) => void
}

/**
 * A key acts as its account, so creating one asks for the password and, while two-factor
 * authentication is on, a code, as changing the password does: a session left open, or taken,
 * cannot mint a lasting credential with it alone.
 */
export function CreateKeyForm({ email, twoFactor, sites, onCreated }: CreateKeyFormProps) {
  const [name, setName] = useState('')
  const [access, setAccess] = useState<ApiKeyAccess>('full')
  const [expiry, setExpiry] = useState<ExpiryChoice>(DEFAULT_EXPIRY)
  const [siteScope, setSiteScope] = useState<SiteScope>('all')
  const [chosenSites, setChosenSites] = useState<Set<string>>(new Set())
  const [addresses, setAddresses] = useState('')
  const [password, setPassword] = useState('')
  const stepUp = useStepUpCode(twoFactor)
  const [state, run] = useFormSubmit(['name', 'access', 'siteIds', 'allowedAddresses', 'expiresAt', 'password', 'code'])
  const submit = () =>
    run(async () => {
      // The expiry counts from the submission, not from when the choice was made.
      const expiresAt = expiresAtOf(expiry, new Date())
      const siteIds = siteIdsOf(siteScope, chosenSites, sites ?? [])
      // Said beside the sites, before the password is spent on a request the API would refuse.
      if (siteIds !== null && siteIds.length === 0) throw new ApiRequestError(400, 'validation_error', '', undefined, [{ field: 'siteIds', message: 'Choose at least one site.' }])
      const created = await stepUp.send((code) => createApiKey({ name: name.trim(), access, siteIds, allowedAddresses: allowedAddressesOf(addresses), expiresAt, password, code }))
      setName('')
      setAccess('full')
      setExpiry(DEFAULT_EXPIRY)
      setSiteScope('all')
      setChosenSites(new Set())
      setAddresses('')
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
        <SiteChoices
          sites={sites}
          scope={siteScope}
          chosen={chosenSites}
          error={state.fieldErrors.siteIds}
          onScopeChange={setSiteScope}
          onChosenChange={setChosenSites}
        />
        <AddressesField
          id="api-key-addresses"
          value={addresses}
          error={state.fieldErrors.allowedAddresses}
          hint="One IP address or range per line (203.0.113.7, 203.0.113.0/24, 2001:db8::/48): where what uses the key runs. The key is refused (403) from anywhere else. Empty: any address."
          onInput={setAddresses}
        />
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
