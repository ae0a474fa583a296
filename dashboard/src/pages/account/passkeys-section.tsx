import { useRef, useState } from 'preact/hooks'
import { ApiRequestError } from '../../api/client.js'
import { addPasskey, canUsePasskeys, isCredentialStillUsable, listPasskeys, makePasskeyCredential, removePasskey, renamePasskey, type NewPasskeyCredential } from '../../api/passkeys.js'
import type { Passkey } from '../../api/types.js'
import { BusyButton } from '../../components/busy-button.js'
import { ConfirmDialog, focusAfterDialog } from '../../components/confirm-dialog.js'
import { Field } from '../../components/field.js'
import { Form } from '../../components/form.js'
import { ErrorNotice, Loading, Notice } from '../../components/notice.js'
import { PasswordField } from '../../components/password-field.js'
import { TableHeadWithActions } from '../../components/table-head.js'
import { useStepUpCode, type TwoFactorGate } from '../../components/step-up-code.js'
import { formatDateTime, formatLastUsed } from '../../lib/format.js'
import { useFormSubmit } from '../../lib/use-form-submit.js'
import { useLoader, type Loaded } from '../../lib/use-loader.js'
import { TableScroll } from '../../components/table-scroll.js'

interface PasskeysSectionProps {
  email: string
  twoFactor: TwoFactorGate
}

/**
 * The account's passkeys: log-ins with a fingerprint, a face or the device's screen lock instead
 * of the password and code. Adding and removing one ask for the password (and, while two-factor is
 * on, a code), as the page's other changes do; renaming asks for nothing.
 */
export function PasskeysSection({ email, twoFactor }: PasskeysSectionProps) {
  const [list, reload] = useLoader(listPasskeys, 'passkeys')
  const passkeys: Loaded<Passkey[]> =
    list.status === 'ready' ? { status: 'ready', data: list.data.items } : list.status === 'loading' ? { status: 'loading', data: list.data?.items } : { ...list, data: list.data?.items }
  // The server's limit, as its list says (the API answers 409 beyond it whatever the page says).
  const limit = list.data?.limit
  const [renaming, setRenaming] = useState<Passkey | undefined>()
  const [removing, setRemoving] = useState<Passkey | undefined>()
  const [outcome, setOutcome] = useState<string | undefined>()
  const heading = useRef<HTMLHeadingElement>(null)
  // A dialog goes with its passkey's state: the keyboard's place is the section's heading then,
  // the row whose button opened it being renamed or gone.
  const closeDialogs = () => {
    setRenaming(undefined)
    setRemoving(undefined)
    focusAfterDialog(heading)
  }
  const done = (message: string) => {
    setOutcome(message)
    reload()
    twoFactor.reload()
  }
  return (
    <section class="card" aria-labelledby="passkeys-heading">
      <h2 id="passkeys-heading" ref={heading} tabIndex={-1}>
        Passkeys
      </h2>
      <p class="muted">
        A passkey logs you in with this device's fingerprint, face or screen lock (or a security key, or your phone) instead of your password and
        two-factor code. It works on this server's address only, so a look-alike site cannot use it.{limit === undefined ? '' : ` At most ${limit}.`} Changing
        your password keeps your passkeys: remove one here to stop it logging in.
      </p>
      {outcome === undefined ? null : <Notice tone="success">{outcome}</Notice>}
      <PasskeyList passkeys={passkeys} onRename={setRenaming} onRemove={setRemoving} />
      {canUsePasskeys() ? (
        <AddPasskeyForm email={email} twoFactor={twoFactor} limit={limit} isFull={limit !== undefined && (passkeys.data?.length ?? 0) >= limit} onAdded={(passkey) => done(`Passkey ${passkey.name} added.`)} />
      ) : (
        <Notice tone="info">
          This browser cannot make passkeys on this address: they need HTTPS (or localhost) and a host name, not an IP address.
        </Notice>
      )}
      {renaming === undefined ? null : (
        <RenameDialog passkey={renaming} onClose={closeDialogs} onRenamed={(passkey) => done(`Passkey renamed to ${passkey.name}.`)} />
      )}
      {removing === undefined ? null : (
        <RemoveDialog passkey={removing} twoFactor={twoFactor} onClose={closeDialogs} onRemoved={() => done(`Passkey ${removing.name} removed.`)} />
      )}
    </section>
  )
}

interface PasskeyListProps {
  passkeys: Loaded<Passkey[]>
  onRename: (passkey: Passkey) => void
  onRemove: (passkey: Passkey) => void
}

function PasskeyList({ passkeys, onRename, onRemove }: PasskeyListProps) {
  if (passkeys.status === 'error') return <ErrorNotice error={passkeys.error} />
  if (passkeys.data === undefined) return passkeys.status === 'loading' ? <Loading /> : null
  if (passkeys.data.length === 0) return <p>No passkeys yet.</p>
  return (
    <TableScroll title="Your passkeys">
      <table class="table passkeys">
        <TableHeadWithActions columns={['Name', 'Added', 'Last used']} />
        <tbody>
          {passkeys.data.map((passkey) => (
            <tr key={passkey.id}>
              <th scope="row">{passkey.name}</th>
              <td class="nowrap">{formatDateTime(passkey.createdAt)}</td>
              <td class="nowrap">{formatLastUsed(passkey.lastUsedAt)}</td>
              <td class="nowrap">
                <button type="button" class="button button--small" aria-label={`Rename passkey ${passkey.name}`} onClick={() => onRename(passkey)}>
                  Rename
                </button>{' '}
                <button type="button" class="button button--small button--danger-outline" aria-label={`Remove passkey ${passkey.name}`} onClick={() => onRemove(passkey)}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  )
}

interface AddPasskeyFormProps {
  email: string
  twoFactor: TwoFactorGate
  limit: number | undefined
  isFull: boolean
  onAdded: (passkey: Passkey) => void
}

/**
 * The browser's prompt comes after what the page can check (a name), and its answer is kept for
 * the next try when the server refuses only the password, the code or the name: the authenticator
 * stores a credential at each prompt, and one the server never took is left on it unusable.
 */
function AddPasskeyForm({ email, twoFactor, limit, isFull, onAdded }: AddPasskeyFormProps) {
  const [name, setName] = useState('')
  const [password, setPassword] = useState('')
  const made = useRef<NewPasskeyCredential | undefined>(undefined)
  const stepUp = useStepUpCode(twoFactor)
  const [state, run] = useFormSubmit(['name', 'password', 'code'])
  const submit = () =>
    run(async () => {
      const trimmed = name.trim()
      if (trimmed === '') throw new ApiRequestError(400, 'validation_error', 'Give the passkey a name.', undefined, [{ field: 'name', message: 'Give the passkey a name.' }])
      const kept = made.current
      const credential = kept !== undefined && Date.now() < kept.usableUntil ? kept : await makePasskeyCredential()
      made.current = credential
      try {
        const added = await stepUp.send((code) => addPasskey(credential, { name: trimmed, password, code }))
        made.current = undefined
        setName('')
        setPassword('')
        stepUp.reset()
        onAdded(added)
        return ''
      } catch (error) {
        if (!isCredentialStillUsable(error)) made.current = undefined
        throw error
      }
    })
  return (
    <Form class="form passkey-add" onSubmit={() => void submit()}>
      <h3>Add a passkey</h3>
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      {isFull ? <Notice tone="info">This account has {limit} passkeys: remove one to add another.</Notice> : null}
      <input type="email" name="username" autoComplete="username" value={email} hidden readOnly />
      <Field id="passkey-name" label="Name" hint="To tell your passkeys apart: “Work laptop”, “Phone”." error={state.fieldErrors.name}>
        {(control) => <input {...control} name="passkey-name" autoComplete="off" required maxLength={100} value={name} onInput={(event) => setName(event.currentTarget.value)} />}
      </Field>
      <PasswordField id="passkey-password" label="Current password" name="current-password" isNew={false} value={password} error={state.fieldErrors.password} onInput={setPassword} />
      {stepUp.field('passkey-code', state.fieldErrors.code)}
      <div class="form__actions">
        <BusyButton type="submit" class="button button--primary" isBusy={state.isBusy} isDisabled={isFull}>
          {state.isBusy ? 'Adding…' : 'Add passkey'}
        </BusyButton>
      </div>
    </Form>
  )
}

interface DialogProps {
  passkey: Passkey
  onClose: () => void
}

function RenameDialog({ passkey, onClose, onRenamed }: DialogProps & { onRenamed: (passkey: Passkey) => void }) {
  const [name, setName] = useState(passkey.name)
  const [state, run] = useFormSubmit(['name'])
  const save = () =>
    run(async () => {
      onRenamed(await renamePasskey(passkey.id, name.trim()))
      onClose()
      return ''
    })
  return (
    <ConfirmDialog title={`Rename passkey ${passkey.name}`} confirmLabel="Save name" confirmTone="primary" isOpen isBusy={state.isBusy} formId="passkey-rename-form" onConfirm={() => void save()} onCancel={onClose}>
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <Form id="passkey-rename-form" class="form" onSubmit={() => void save()}>
        <Field id="passkey-new-name" label="New name" error={state.fieldErrors.name}>
          {(control) => <input {...control} autoComplete="off" required maxLength={100} value={name} onInput={(event) => setName(event.currentTarget.value)} />}
        </Field>
      </Form>
    </ConfirmDialog>
  )
}

function RemoveDialog({ passkey, twoFactor, onClose, onRemoved }: DialogProps & { twoFactor: TwoFactorGate; onRemoved: () => void }) {
  const [password, setPassword] = useState('')
  const stepUp = useStepUpCode(twoFactor)
  const [state, run] = useFormSubmit(['password', 'code'])
  const remove = () =>
    run(async () => {
      await stepUp.send((code) => removePasskey(passkey.id, { password, code }))
      onRemoved()
      onClose()
      return ''
    })
  return (
    <ConfirmDialog title={`Remove passkey ${passkey.name}?`} confirmLabel="Remove passkey" isOpen isBusy={state.isBusy} formId="passkey-remove-form" onConfirm={() => void remove()} onCancel={onClose}>
      <p>
        It will log in no more, and the sessions it logged in (on any device, this one too if it was) are logged out. Enter your password
        {twoFactor.isOn ? ' and a code' : ''} to confirm.
      </p>
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <Form id="passkey-remove-form" class="form" onSubmit={() => void remove()}>
        <PasswordField id="passkey-remove-password" label="Password" name="password" isNew={false} value={password} error={state.fieldErrors.password} onInput={setPassword} />
        {stepUp.field('passkey-remove-code', state.fieldErrors.code)}
      </Form>
    </ConfirmDialog>
  )
}
