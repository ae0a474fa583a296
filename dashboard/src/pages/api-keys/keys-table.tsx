import { useState } from 'preact/hooks'
import { revokeApiKey } from '../../api/api-keys.js'
import type { ApiKey, Site } from '../../api/types.js'
import { ConfirmDialog } from '../../components/confirm-dialog.js'
import { ErrorNotice } from '../../components/notice.js'
import { accessLabel, keyAddressesLabel, keySitesLabel } from '../../lib/api-keys.js'
import { formatDateTime, formatLastUsed } from '../../lib/format.js'
import { TableHeadWithActions } from '../../components/table-head.js'
import { TableScroll } from '../../components/table-scroll.js'

/**
 * "Never", the time it expires, or an "Expired" badge before the time it did (the key is refused
 * since): expired as the service judged it when the list was read, by the clock that refuses the
 * key, not by this browser's, which may be off.
 */
function Expiry({ apiKey: { expiresAt, expired } }: { apiKey: ApiKey }) {
  if (expiresAt === null) return <>Never</>
  if (!expired) return <>{formatDateTime(expiresAt)}</>
  return (
    <>
      <span class="badge badge--bad">Expired</span> {formatDateTime(expiresAt)}
    </>
  )
}

/** The sites a key reaches; a count of them until the account's sites are read (or if they cannot be). */
function KeySites({ siteIds, sites }: { siteIds: string[] | null; sites: readonly Site[] | undefined }) {
  if (siteIds === null || sites !== undefined) return <>{keySitesLabel(siteIds, sites ?? [])}</>
  return <>{siteIds.length === 1 ? '1 site' : `${siteIds.length} sites`}</>
}

interface KeysTableProps {
  keys: ApiKey[]
  sites: readonly Site[] | undefined
  /** Opens the edit form of a key (an expired one has none: it can only be revoked). */
  onEdit: (key: ApiKey) => void
  onRevoked: (id: string) => void
}

export function KeysTable({ keys, sites, onEdit, onRevoked }: KeysTableProps) {
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
      <TableScroll title="Your keys">
        <table class="table">
          <TableHeadWithActions columns={['Name', 'Key', 'Access', 'Expires', 'Sites', 'Addresses', 'Created', 'Last used']} />
          <tbody>
            {keys.map((key) => (
              <tr key={key.id}>
                <th scope="row">{key.name}</th>
                <td class="code">{key.prefix}…</td>
                <td class="nowrap">{accessLabel(key.access)}</td>
                <td class="nowrap">
                  <Expiry apiKey={key} />
                </td>
                <td>
                  <KeySites siteIds={key.siteIds} sites={sites} />
                </td>
                {/* A long list by its first entries: the key's edit form shows it whole. */}
                <td>{keyAddressesLabel(key.allowedAddresses)}</td>
                <td class="nowrap">{formatDateTime(key.createdAt)}</td>
                <td class="nowrap">{formatLastUsed(key.lastUsedAt)}</td>
                <td class="nowrap">
                  {key.expired ? null : (
                    <button type="button" class="button button--small" onClick={() => onEdit(key)} aria-label={`Edit ${key.name}`}>
                      Edit
                    </button>
                  )}{' '}
                  <button type="button" class="button button--small button--danger-outline" onClick={() => setRevoking(key)} aria-label={`Revoke ${key.name}`}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
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
