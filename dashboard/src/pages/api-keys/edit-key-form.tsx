import { useEffect, useRef, useState } from 'preact/hooks'
import { editApiKey } from '../../api/api-keys.js'
import { ApiRequestError } from '../../api/client.js'
import type { ApiKey, ApiKeyAccess, Site } from '../../api/types.js'
import { BusyButton } from '../../components/busy-button.js'
import { Field } from '../../components/field.js'
import { Form } from '../../components/form.js'
import { Notice } from '../../components/notice.js'
import { PasswordField } from '../../components/password-field.js'
import { useStepUpCode, type TwoFactorGate } from '../../components/step-up-code.js'
import { allowedAddressesText, changedAddressesOf, changedTermsOf, expiresAtOf, expiryChoices, type ExpiryChoice, type SiteScope } from '../../lib/api-keys.js'
import { formatDateTime } from '../../lib/format.js'
import { useFormSubmit } from '../../lib/use-form-submit.js'
import { AccessChoices } from './access-choices.js'
import { AddressesField } from './addresses-field.js'
import { SiteChoices } from './site-choices.js'

interface EditKeyFormProps {
  /** The account's, for password managers: the account the password asked for belongs to. */
  email: string
  twoFactor: TwoFactorGate
  apiKey: ApiKey
  /** The account's sites, to choose the key's among; undefined while they load. */
  sites: readonly Site[] | undefined
  onSaved: (key: ApiKey) => void
  onCancel: () => void
}

/** The expiry select's choice that sends none: the key keeps the expiry it has. */
const KEEP_EXPIRY = 'keep'

/**
 * Changes a key's name, access, sites, addresses or expiry; its secret stays, so the scripts that use it go on
 * without a new one. As the creation form, with the key's terms filled in; the password (and a
 * code) is asked for by the service only when the edit widens the key, which a stolen session
 * alone must not do to a key it may hold a copy of.
 */
export function EditKeyForm({ email, twoFactor, apiKey, sites, onSaved, onCancel }: EditKeyFormProps) {
  const [name, setName] = useState(apiKey.name)
  const [access, setAccess] = useState<ApiKeyAccess>(apiKey.access)
  const [expiry, setExpiry] = useState<ExpiryChoice | typeof KEEP_EXPIRY>(KEEP_EXPIRY)
  const [siteScope, setSiteScope] = useState<SiteScope>(apiKey.siteIds === null ? 'all' : 'some')
  const [chosenSites, setChosenSites] = useState<Set<string>>(new Set(apiKey.siteIds ?? []))
  const [addresses, setAddresses] = useState(allowedAddressesText(apiKey.allowedAddresses))
  const [password, setPassword] = useState('')
  const stepUp = useStepUpCode(twoFactor)
  const [state, run] = useFormSubmit(['name', 'access', 'siteIds', 'allowedAddresses', 'expiresAt', 'password', 'code'])
  const heading = useRef<HTMLHeadingElement>(null)
  // The form takes the keyboard when it opens, for another key too.
  useEffect(() => heading.current?.focus(), [apiKey.id])
  const submit = () =>
    run(async () => {
      const terms = changedTermsOf(apiKey, { access, scope: siteScope, chosen: chosenSites }, sites ?? [])
      if (terms.siteIds?.length === 0) throw new ApiRequestError(400, 'validation_error', '', undefined, [{ field: 'siteIds', message: 'Choose at least one site.' }])
      const expiresAt = expiry === KEEP_EXPIRY ? {} : { expiresAt: expiresAtOf(expiry, new Date()) }
      const confirmation = password === '' ? {} : { password }
      const saved = await stepUp.send((code) =>
        editApiKey(apiKey.id, { name: name.trim(), ...terms, ...changedAddressesOf(apiKey, addresses), ...expiresAt, ...confirmation, code }),
      )
      stepUp.reset()
      onSaved(saved)
      return 'The key was changed.'
    })
  const current = apiKey.expiresAt === null ? 'never' : formatDateTime(apiKey.expiresAt)
  return (
    <section class="card" aria-labelledby="edit-key-heading">
      <h2 id="edit-key-heading" ref={heading} tabIndex={-1}>
        Edit key “{apiKey.name}” ({apiKey.prefix}…)
      </h2>
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <Form class="form" onSubmit={() => void submit()}>
        <input type="email" name="username" autoComplete="username" value={email} hidden readOnly />
        <div class="form__grid">
          <Field id="edit-key-name" label="Name" error={state.fieldErrors.name}>
            {(control) => <input {...control} name="name" required maxLength={100} value={name} onInput={(event) => setName(event.currentTarget.value)} />}
          </Field>
          <Field id="edit-key-expiry" label="Expires" error={state.fieldErrors.expiresAt} hint="Counted from now. A later expiry, or none, needs your password.">
            {(control) => (
              <select {...control} name="expiry" value={expiry} onChange={(event) => setExpiry(event.currentTarget.value as ExpiryChoice | typeof KEEP_EXPIRY)}>
                <option value={KEEP_EXPIRY}>Unchanged ({current})</option>
                {expiryChoices.map((choice) => (
                  <option key={choice.value} value={choice.value}>
                    {choice.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <AccessChoices id="edit-key-access" value={access} error={state.fieldErrors.access} onChange={setAccess} />
        <SiteChoices
          id="edit-key-sites"
          sites={sites}
          scope={siteScope}
          chosen={chosenSites}
          error={state.fieldErrors.siteIds}
          onScopeChange={setSiteScope}
          onChosenChange={setChosenSites}
        />
        <AddressesField
          id="edit-key-addresses"
          value={addresses}
          error={state.fieldErrors.allowedAddresses}
          hint="One IP address or range per line; empty: any address. An address outside the list, or emptying it, needs your password."
          onInput={setAddresses}
        />
        <div class="form__grid">
          <PasswordField
            id="edit-key-password"
            label="Password"
            name="password"
            isNew={false}
            isOptional
            hint="Needed only to widen the key: full access, more sites or addresses, or a later expiry. Renaming or narrowing it needs none."
            value={password}
            error={state.fieldErrors.password}
            onInput={setPassword}
          />
          {stepUp.field('edit-key-code', state.fieldErrors.code)}
        </div>
        <div class="form__actions">
          <BusyButton type="submit" class="button button--primary" isBusy={state.isBusy}>
            {state.isBusy ? 'Saving…' : 'Save changes'}
          </BusyButton>
          <button type="button" class="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </Form>
    </section>
  )
}
