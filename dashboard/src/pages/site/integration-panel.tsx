import { useState } from 'preact/hooks'
import { deleteSite, rotateSiteSecret } from '../../api/sites.js'
import type { Site } from '../../api/types.js'
import { ConfirmDialog } from '../../components/confirm-dialog.js'
import { IntegrationKeys } from '../../components/integration-keys.js'
import { ErrorNotice, Notice } from '../../components/notice.js'
import { navigate } from '../../lib/router.js'

type Pending = 'none' | 'rotate' | 'delete'

export function IntegrationPanel({ site }: { site: Site }) {
  const [pending, setPending] = useState<Pending>('none')
  const [isBusy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const [secretKey, setSecretKey] = useState<string | undefined>()

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
  const rotate = () => act(async () => setSecretKey(await rotateSiteSecret(site.id)))
  const remove = () =>
    act(async () => {
      await deleteSite(site.id)
      navigate({ name: 'sites' })
    })

  return (
    <>
      <section class="card" aria-labelledby="integration-heading">
        <h2 id="integration-heading">Keys and snippet</h2>
        {secretKey === undefined ? null : <Notice tone="success">The secret key was rotated. The old one no longer works.</Notice>}
        <IntegrationKeys siteKey={site.siteKey} secretKey={secretKey} />
      </section>
      <section class="card card--danger" aria-labelledby="danger-heading">
        <h2 id="danger-heading">Secret key and deletion</h2>
        {error === undefined ? null : <ErrorNotice error={error} />}
        <div class="danger-row">
          <div>
            <h3>Rotate the secret key</h3>
            <p class="muted">Issues a new secret key. The current one stops working at once, so update your server right after.</p>
          </div>
          <button type="button" class="button button--danger-outline" onClick={() => setPending('rotate')}>
            Rotate secret key
          </button>
        </div>
        <div class="danger-row">
          <div>
            <h3>Delete this site</h3>
            <p class="muted">Its keys stop working and its settings, logs and deliveries are deleted.</p>
          </div>
          <button type="button" class="button button--danger" onClick={() => setPending('delete')}>
            Delete site
          </button>
        </div>
      </section>
      <ConfirmDialog
        title="Rotate the secret key?"
        confirmLabel="Rotate secret key"
        isOpen={pending === 'rotate'}
        isBusy={isBusy}
        onConfirm={() => void rotate()}
        onCancel={() => setPending('none')}
      >
        <p>
          The current secret key of <strong>{site.name}</strong> stops working immediately. Siteverify calls from your
          server fail until you deploy the new key.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        title={`Delete ${site.name}?`}
        confirmLabel="Delete site"
        isOpen={pending === 'delete'}
        isBusy={isBusy}
        onConfirm={() => void remove()}
        onCancel={() => setPending('none')}
      >
        <p>
          This cannot be undone. Pages using the site key <code>{site.siteKey}</code> will stop getting challenges.
        </p>
      </ConfirmDialog>
    </>
  )
}
