import { useRef, useState } from 'preact/hooks'
import { deleteSite, endPreviousSecret, rotateSiteSecret } from '../../api/sites.js'
import type { SecretRotation, Site } from '../../api/types.js'
import { ConfirmDialog, focusAfterDialog } from '../../components/confirm-dialog.js'
import { IntegrationKeys } from '../../components/integration-keys.js'
import { ErrorNotice, Notice } from '../../components/notice.js'
import { formatDateTime } from '../../lib/format.js'
import { canChangeSite, canDeleteSite } from '../../lib/site-access.js'
import { navigate } from '../../lib/router.js'
import { DeleteSiteDialog } from './delete-site-dialog.js'

type Pending = 'none' | 'rotate' | 'end-previous' | 'delete'

interface IntegrationPanelProps {
  site: Site
  /** Called after a change the site's answer shows (the previous secret key's end). */
  onChanged: () => void
}

export function IntegrationPanel({ site, onChanged }: IntegrationPanelProps) {
  const [pending, setPending] = useState<Pending>('none')
  const [isBusy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const [rotation, setRotation] = useState<SecretRotation | undefined>()
  const [isLeaked, setLeaked] = useState(false)
  const dangerHeading = useRef<HTMLHeadingElement>(null)
  const secretKeyInput = useRef<HTMLInputElement>(null)

  const act = async (work: () => Promise<void>) => {
    setBusy(true)
    setError(undefined)
    try {
      await work()
    } catch (caught) {
      setError(caught)
    } finally {
      setBusy(false)
      setPending('none')
    }
  }
  const rotate = () =>
    act(async () => {
      setRotation(await rotateSiteSecret(site.id, isLeaked))
      onChanged()
      // The dialog gives focus back to its button, below the new key: the key is what to copy now.
      focusAfterDialog(secretKeyInput)
    })
  const endPrevious = () =>
    act(async () => {
      await endPreviousSecret(site.id)
      // The rotation's notice must no longer promise the old key's grace period.
      setRotation((shown) => shown && { ...shown, previousSecretExpiresAt: null })
      onChanged()
      // The previous key's row, with the button that opened the dialog, goes once the site reloads.
      focusAfterDialog(dangerHeading)
    })
  const openRotation = () => {
    setLeaked(false)
    setPending('rotate')
  }
  const remove = () =>
    act(async () => {
      await deleteSite(site.id)
      navigate({ name: 'sites' })
    })

  return (
    <>
      <section class="card" aria-labelledby="integration-heading">
        <h2 id="integration-heading">Keys and snippet</h2>
        {rotation === undefined ? null : (
          <Notice tone="success">
            The secret key was rotated.{' '}
            {rotation.previousSecretExpiresAt === null
              ? 'The old one no longer works.'
              : `The old one keeps working until ${formatDateTime(rotation.previousSecretExpiresAt)}: deploy the new one before then.`}
          </Notice>
        )}
        <IntegrationKeys siteKey={site.siteKey} secretKey={rotation?.secretKey} secretKeyInput={secretKeyInput} />
      </section>
      {/* A viewer copies the keys and the snippet above, and is offered none of these changes. */}
      {canChangeSite(site) ? (
        <section class="card card--danger" aria-labelledby="danger-heading">
          <h2 id="danger-heading" ref={dangerHeading} tabIndex={-1}>
            {canDeleteSite(site) ? 'Secret key and deletion' : 'Secret key'}
          </h2>
          {error === undefined ? null : <ErrorNotice error={error} />}
          <div class="danger-row">
            <div>
              <h3>Rotate the secret key</h3>
              <p class="muted">
                Issues a new secret key. The current one keeps working for two hours, so you can deploy the new one without
                failed calls, unless you stop it at once.
              </p>
            </div>
            <button type="button" class="button button--danger-outline" onClick={openRotation}>
              Rotate secret key
            </button>
          </div>
          {site.previousSecretExpiresAt === null ? null : (
            <div class="danger-row">
              <div>
                <h3>Previous secret keys</h3>
                <p class="muted">
                  The secret keys your last rotations replaced (two at most) still work, the last of them until{' '}
                  {formatDateTime(site.previousSecretExpiresAt)}.
                </p>
              </div>
              <button type="button" class="button button--danger-outline" onClick={() => setPending('end-previous')}>
                Stop the previous keys now
              </button>
            </div>
          )}
          {/* An admin may do all but delete the site: that stays its owner's (the API answers 403 too). */}
          {canDeleteSite(site) ? (
            <div class="danger-row">
              <div>
                <h3>Delete this site</h3>
                <p class="muted">Its keys stop working and its settings, logs and deliveries are deleted.</p>
              </div>
              <button type="button" class="button button--danger" onClick={() => setPending('delete')}>
                Delete site
              </button>
            </div>
          ) : (
            <p class="muted">Only the site's owner can delete it.</p>
          )}
        </section>
      ) : null}
      <ConfirmDialog
        title="Rotate the secret key?"
        confirmLabel="Rotate secret key"
        isOpen={pending === 'rotate'}
        isBusy={isBusy}
        onConfirm={() => void rotate()}
        onCancel={() => setPending('none')}
      >
        <p>
          <strong>{site.name}</strong> gets a new secret key. The current one keeps working for two hours beside it.
          {site.previousSecretExpiresAt === null
            ? null
            : ' The key the last rotation replaced keeps working too, until its own two hours end: rotating again because the new key was lost does not stop the one your server still uses.'}
        </p>
        <label class="check">
          <input type="checkbox" checked={isLeaked} onChange={(event) => setLeaked(event.currentTarget.checked)} />
          <span>
            Stop the current key at once (it leaked). Siteverify calls from your server fail until you deploy the new key.
          </span>
        </label>
      </ConfirmDialog>
      <ConfirmDialog
        title="Stop the previous secret keys?"
        confirmLabel="Stop the previous keys"
        isOpen={pending === 'end-previous'}
        isBusy={isBusy}
        onConfirm={() => void endPrevious()}
        onCancel={() => setPending('none')}
      >
        <p>Siteverify calls that still send a replaced secret key of <strong>{site.name}</strong> fail from now on.</p>
      </ConfirmDialog>
      <DeleteSiteDialog site={site} isOpen={pending === 'delete'} isBusy={isBusy} onConfirm={() => void remove()} onCancel={() => setPending('none')} />
    </>
  )
}
