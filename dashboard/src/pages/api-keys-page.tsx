import { useEffect, useRef, useState } from 'preact/hooks'
import { createApiKey, listApiKeys, revokeApiKey } from '../api/api-keys.js'
import type { ApiKey, CreatedApiKey } from '../api/types.js'
import { ConfirmDialog, focusAfterDialog } from '../components/confirm-dialog.js'
import { Field } from '../components/field.js'
import { ErrorNotice, Loading, Notice } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { SecretBox } from '../components/secret-box.js'
import { formatDateTime } from '../lib/format.js'
import { useFormSubmit } from '../lib/use-form-submit.js'
import { useLoader } from '../lib/use-loader.js'
import { Form } from '../components/form.js'
import { BusyButton } from '../components/busy-button.js'

export function ApiKeysPage() {
  const [keys, reload] = useLoader(listApiKeys, 'api-keys')
  const [created, setCreated] = useState<CreatedApiKey | undefined>()
  const keysHeading = useRef<HTMLHeadingElement>(null)
  return (
    <>
      <PageHeading title="API keys" />
      <p class="muted">
        Scripts and CI use an API key instead of a login: send it as <code>Authorization: Bearer &lt;key&gt;</code> to
        any <code>/api/v1</code> dashboard endpoint. A key acts as your account.
      </p>
      <CreateKeyForm
        onCreated={(key) => {
          setCreated(key)
          reload()
        }}
      />
      {created === undefined ? null : (
        <section class="card one-time" aria-labelledby="new-key-heading">
          <NewKeyHeading name={created.name} />
          <SecretBox id="new-api-key" label="API key" value={created.key} />
          <p class="one-time__warning">
            <strong>Copy the key now.</strong> It is shown only once; only its prefix is kept for the list.
          </p>
          <button
            type="button"
            class="button button--small"
            onClick={() => {
              setCreated(undefined)
              // The button goes with the key: the keyboard goes on to the list of keys.
              focusAfterDialog(keysHeading)
            }}
          >
            I have copied it
          </button>
        </section>
      )}
      <section class="card" aria-labelledby="keys-heading">
        <h2 id="keys-heading" ref={keysHeading} tabIndex={-1}>
          Your keys
        </h2>
        {keys.status === 'error' ? <ErrorNotice error={keys.error} /> : null}
        {keys.data === undefined ? keys.status === 'loading' ? <Loading /> : null : (
          <KeysTable
            keys={keys.data}
            onRevoked={(id) => {
              // A revoked key is not left on screen in full as "your new key".
              if (created?.id === id) setCreated(undefined)
              reload()
              // Its Revoke button goes with its row.
              focusAfterDialog(keysHeading)
            }}
          />
        )}
      </section>
    </>
  )
}

/**
 * The new key's heading takes focus when it appears: screen readers then read the one-time key's
 * section at once, and keyboard focus does not stay on the button that disabled itself.
 */
function NewKeyHeading({ name }: { name: string }) {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [name])
  return (
    <h2 id="new-key-heading" ref={heading} tabIndex={-1}>
      Your new API key “{name}”
    </h2>
  )
}

function CreateKeyForm({ onCreated }: { onCreated: (key: CreatedApiKey) => void }) {
  const [name, setName] = useState('')
  const [state, run] = useFormSubmit(['name'])
  const submit = () =>
    run(async () => {
      onCreated(await createApiKey(name.trim()))
      setName('')
      return 'The key was created.'
    })
  return (
    <section class="card" aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create a key</h2>
      {state.generalError === undefined ? null : <Notice tone="error">{state.generalError}</Notice>}
      <Form class="form form--inline" onSubmit={() => void submit()}>
        <Field id="api-key-name" label="Name" error={state.fieldErrors.name} hint="What uses it, for example “deploy script”.">
          {(control) => <input {...control} name="name" required maxLength={100} value={name} onInput={(event) => setName(event.currentTarget.value)} />}
        </Field>
        <BusyButton type="submit" class="button button--primary" isBusy={state.isBusy}>
          {state.isBusy ? 'Creating…' : 'Create key'}
        </BusyButton>
      </Form>
    </section>
  )
}

function KeysTable({ keys, onRevoked }: { keys: ApiKey[]; onRevoked: (id: string) => void }) {
  const [revoking, setRevoking] = useState<ApiKey | undefined>()
  const [isBusy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const revoke = async (key: ApiKey) => {
    setBusy(true)
    setError(undefined)
    try {
      await revokeApiKey(key.id)
      onRevoked(key.id)
    } catch (caught) {
      setError(caught)
    } finally {
      setBusy(false)
      setRevoking(undefined)
    }
  }
  if (keys.length === 0) return <p class="muted">No API keys yet.</p>
  return (
    <>
      {error === undefined ? null : <ErrorNotice error={error} />}
      <div class="table-scroll" role="region" aria-labelledby="keys-heading" tabIndex={0}>
        <table class="table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.id}>
                <th scope="row">{key.name}</th>
                <td class="code">{key.prefix}…</td>
                <td class="nowrap">{formatDateTime(key.createdAt)}</td>
                <td class="nowrap">{key.lastUsedAt === undefined || key.lastUsedAt === null ? 'Never' : formatDateTime(key.lastUsedAt)}</td>
                <td>
                  <button type="button" class="button button--small button--danger-outline" onClick={() => setRevoking(key)} aria-label={`Revoke ${key.name}`}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ConfirmDialog
        title="Revoke this API key?"
        confirmLabel="Revoke key"
        isOpen={revoking !== undefined}
        isBusy={isBusy}
        onConfirm={() => {
          if (revoking !== undefined) void revoke(revoking)
        }}
        onCancel={() => setRevoking(undefined)}
      >
        <p>
          Scripts using <strong>{revoking?.name}</strong> ({revoking?.prefix}…) will get 401 answers from now on.
        </p>
      </ConfirmDialog>
    </>
  )
}
