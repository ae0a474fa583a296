import { useCallback, useState } from 'preact/hooks'
import { listMembers } from '../../api/members.js'
import type { Site } from '../../api/types.js'
import { ConfirmDialog } from '../../components/confirm-dialog.js'
import { Field } from '../../components/field.js'
import { formatNumber } from '../../lib/format.js'
import { useLoader } from '../../lib/use-loader.js'

interface DeleteSiteDialogProps {
  site: Site
  isOpen: boolean
  isBusy: boolean
  onConfirm: () => void
  onCancel: () => void
}

/** Who else loses the site with it: its members but its owner, read when the dialog opens. */
function describeMembers(count: number | undefined): string {
  if (count === undefined) return 'Counting the members who lose access…'
  if (count === 0) return 'No one else is a member of it.'
  return count === 1 ? 'The one other member loses access to it.' : `Its ${formatNumber(count)} other members lose access to it.`
}

/**
 * The deletion of a site, confirmed by typing its name: among "Client 01 shop" … "Client 12 shop",
 * a click on the wrong site's page is not enough to delete it. Names how many members lose it too.
 */
export function DeleteSiteDialog({ site, isOpen, isBusy, onConfirm, onCancel }: DeleteSiteDialogProps) {
  const [typed, setTyped] = useState('')
  const loadMembers = useCallback(async () => (isOpen ? (await listMembers(site.id)).filter((member) => member.role !== 'owner').length : undefined), [isOpen, site.id])
  const [members] = useLoader(loadMembers, `${site.id}:${String(isOpen)}`)
  const isNamed = typed.trim() === site.name
  const close = () => {
    setTyped('')
    onCancel()
  }
  return (
    <ConfirmDialog
      title={`Delete ${site.name}?`}
      confirmLabel="Delete site"
      isOpen={isOpen}
      isBusy={isBusy}
      formId="delete-site-form"
      isConfirmDisabled={!isNamed}
      onConfirm={onConfirm}
      onCancel={close}
    >
      <p>
        This cannot be undone. Pages using the site key <code>{site.siteKey}</code> will stop getting challenges.
      </p>
      {members.status === 'error' ? <p>Its other members, if any, lose access to it.</p> : <p>{describeMembers(members.data)}</p>}
      <form
        id="delete-site-form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          if (isNamed) onConfirm()
        }}
      >
        <Field id="delete-site-name" label="Type the site's name to confirm" hint={<>The name is {site.name}.</>}>
          {(control) => (
            <input {...control} type="text" autoComplete="off" spellcheck={false} value={typed} onInput={(event) => setTyped(event.currentTarget.value)} />
          )}
        </Field>
      </form>
    </ConfirmDialog>
  )
}
