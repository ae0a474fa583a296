import { useEffect, useRef, useState } from 'preact/hooks'
import { listApiKeys } from '../api/api-keys.js'
import { listSites } from '../api/sites.js'
import type { ApiKey, CreatedApiKey, Site } from '../api/types.js'
import { focusAfterDialog } from '../components/confirm-dialog.js'
import { ErrorNotice, Loading } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { SecretBox } from '../components/secret-box.js'
import { useTwoFactorGate } from '../components/step-up-code.js'
import { accessLabel, keyAddressesLabel, keySitesLabel } from '../lib/api-keys.js'
import { formatDateTime } from '../lib/format.js'
import { useLoader } from '../lib/use-loader.js'
import { CreateKeyForm } from './api-keys/create-key-form.js'
import { EditKeyForm } from './api-keys/edit-key-form.js'
import { KeysTable } from './api-keys/keys-table.js'

/** What the new key may do, where, from where and until when, said with it once. */
function describeTerms(key: CreatedApiKey, sites: readonly Site[]): string {
  const until = key.expiresAt === null ? 'never expires' : `expires ${formatDateTime(key.expiresAt)}`
  // A key for all sites says nothing of them, as before keys could be for some.
  const where = key.siteIds === null ? '' : `; only ${keySitesLabel(key.siteIds, sites)}`
  // Nor does a key for any address.
  const from = key.allowedAddresses === null ? '' : `; from ${keyAddressesLabel(key.allowedAddresses)} only`
  return `${accessLabel(key.access)}${where}${from}; ${until}.`
}

export function ApiKeysPage({ email }: { email: string }) {
  const [keys, reload] = useLoader(listApiKeys, 'api-keys')
  // For a key's sites: chosen in the form, named in the list. Without them the list names none.
  const [sites] = useLoader(listSites, 'sites')
  // Creating a key asks for a code while two-factor authentication is on.
  const { gate: twoFactor } = useTwoFactorGate()
  const [created, setCreated] = useState<CreatedApiKey | undefined>()
  const [editing, setEditing] = useState<ApiKey | undefined>()
  // The edit form goes when it is done: the keyboard goes back to the list of keys.
  const closeEdit = () => {
    setEditing(undefined)
    focusAfterDialog(keysHeading)
  }
  const keysHeading = useRef<HTMLHeadingElement>(null)
  return (
    <>
      <PageHeading title="API keys" />
      <p class="muted">
        Scripts and CI use an API key instead of a login: send it as <code>Authorization: Bearer &lt;key&gt;</code> to
        any <code>/api/v1</code> dashboard endpoint. A key acts as your account, with full access or read only, on all your sites or
        only some, until it expires or is revoked.
      </p>
      <CreateKeyForm
        email={email}
        twoFactor={twoFactor}
        sites={sites.data}
        onCreated={(key) => {
          setCreated(key)
          reload()
        }}
      />
      {created === undefined ? null : (
        <section class="card one-time" aria-labelledby="new-key-heading">
          <NewKeyHeading id={created.id} name={created.name} />
          <SecretBox id="new-api-key" label="API key" value={created.key} hint={describeTerms(created, sites.data ?? [])} />
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
            sites={sites.data}
            onEdit={setEditing}
            onRevoked={(id) => {
              if (editing?.id === id) setEditing(undefined)
              // A revoked key is not left on screen in full as "your new key".
              if (created?.id === id) setCreated(undefined)
              reload()
              // Its Revoke button goes with its row.
              focusAfterDialog(keysHeading)
            }}
          />
        )}
      </section>
      {editing === undefined ? null : (
        <EditKeyForm
          key={editing.id}
          email={email}
          twoFactor={twoFactor}
          apiKey={editing}
          sites={sites.data}
          onSaved={() => {
            reload()
            closeEdit()
          }}
          onCancel={closeEdit}
        />
      )}
    </>
  )
}

/**
 * The new key's heading takes focus when it appears: screen readers then read the one-time key's
 * section at once, and keyboard focus does not stay on the button that disabled itself.
 */
function NewKeyHeading({ id, name }: { id: string; name: string }) {
  const heading = useRef<HTMLHeadingElement>(null)
  // Each new key, even one named as the last.
  useEffect(() => heading.current?.focus(), [id])
  return (
    <h2 id="new-key-heading" ref={heading} tabIndex={-1}>
      Your new API key “{name}”
    </h2>
  )
}
