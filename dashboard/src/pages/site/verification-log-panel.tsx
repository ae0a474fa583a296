import { useCallback, useRef, useState } from 'preact/hooks'
import { fetchVerifications } from '../../api/analytics.js'
import { verificationActions, type Site, type VerificationAction } from '../../api/types.js'
import { DownloadLinks } from '../../components/download-links.js'
import { ErrorNotice, Loading } from '../../components/notice.js'
import { EPHEMERAL_ID_PATTERN } from '../../../../src/domain/token/ephemeral-id-pattern.js'
import { ReferenceSearch } from '../../components/reference-search.js'
import { actionStyles } from '../../lib/actions.js'
import { isReference } from '../../lib/reference.js'
import { useAddressParam } from '../../lib/router.js'
import { useLoader } from '../../lib/use-loader.js'
import { VerificationsTable } from './verifications-table.js'

const pageSizes = [10, 25, 50, 100] as const

const devicePattern = new RegExp(EPHEMERAL_ID_PATTERN)

/** A device as the API names it (its ephemeral id), as the API checks it. */
const isDevice = (text: string): text is string => devicePattern.test(text)

export function VerificationLogPanel({ site }: { site: Site }) {
  const [action, setAction] = useAddressParam<VerificationAction | ''>('action', ['', ...verificationActions], '')
  const [pageSizeText, setPageSizeText] = useAddressParam('rows', pageSizes.map(String), '25')
  const pageSize = Number(pageSizeText)
  const [reference, setReference] = useAddressParam<string>('reference', isReference, '')
  const [device, setDevice] = useAddressParam<string>('device', isDevice, '')
  // Cursors of the pages seen so far: the last one is the current page; going back pops it.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined])
  const cursor = cursors[cursors.length - 1]
  const load = useCallback(
    () =>
      fetchVerifications(site.id, {
        limit: pageSize,
        ...(cursor === undefined ? {} : { cursor }),
        ...(action === '' ? {} : { action }),
        ...(reference === '' ? {} : { reference }),
        ...(device === '' ? {} : { device }),
      }),
    [site.id, cursor, action, pageSize, reference, device],
  )
  const [page, reload] = useLoader(load, `${site.id}:${action}:${pageSize}:${reference}:${device}:${cursor ?? ''}`)
  const findReference = (wanted: string) => {
    setReference(wanted)
    // A visitor's verification is sought whatever its action or device: a filter left on would hide it.
    if (wanted !== '') {
      setAction('')
      setDevice('')
    }
    setCursors([undefined])
  }
  const heading = useRef<HTMLHeadingElement>(null)
  const showDevice = (wanted: string) => {
    setDevice(wanted)
    // All the device's verifications, not the one row a reference found.
    if (wanted !== '') setReference('')
    setCursors([undefined])
    // The button pressed goes with the rows it was in: the log's heading keeps the keyboard's place.
    heading.current?.focus()
  }
  const pageNumber = cursors.length

  return (
    <section class="card" aria-labelledby="log-heading">
      <div class="card__heading">
        <h2 id="log-heading" ref={heading} tabIndex={-1}>
          Verification log
        </h2>
        <div class="toolbar">
          <label for="log-action" class="toolbar__label">
            Action
          </label>
          <select
            id="log-action"
            value={action}
            onChange={(event) => {
              setAction(event.currentTarget.value as VerificationAction | '')
              setCursors([undefined])
            }}
          >
            <option value="">All actions</option>
            {verificationActions.map((name) => (
              <option key={name} value={name}>
                {actionStyles[name].label}
              </option>
            ))}
          </select>
          <label for="log-page-size" class="toolbar__label">
            Rows
          </label>
          <select
            id="log-page-size"
            value={String(pageSize)}
            onChange={(event) => {
              setPageSizeText(event.currentTarget.value)
              setCursors([undefined])
            }}
          >
            {pageSizes.map((size) => (
              <option key={size} value={String(size)}>
                {size}
              </option>
            ))}
          </select>
          <button
            type="button"
            class="button button--small"
            onClick={() => {
              // Back to the newest entries: that is what someone refreshing a log wants to see.
              if (cursors.length > 1) setCursors([undefined])
              else reload()
            }}
          >
            Refresh
          </button>
          <DownloadLinks path={`/sites/${encodeURIComponent(site.id)}/verifications/export`} query={{ action, reference, device }} />
        </div>
      </div>
      <ReferenceSearch
        id="log"
        reference={reference}
        onFind={findReference}
        idleHint="A visitor who was turned away is shown a reference: find their verification by it."
        clearLabel="Show all"
      />
      {/* The status region stays in place, so that what it says when a device is chosen is announced. */}
      <div class={device === '' ? undefined : 'log-filter'}>
        <p role="status" class="log-filter__text">
          {device === '' ? null : (
            <>
              Verifications of device <span class="code">{device.toLowerCase()}</span>, the id Siteverify names it by. A device's id changes every
              Monday: its other weeks are under other ids.
            </>
          )}
        </p>
        {device === '' ? null : (
          <button type="button" class="button button--small" onClick={() => showDevice('')}>
            All devices
          </button>
        )}
      </div>
      {page.status === 'error' ? <ErrorNotice error={page.error} /> : null}
      {page.data === undefined && page.status === 'loading' ? <Loading /> : null}
      {page.data === undefined && page.status !== 'error' ? null : (
        <>
          {page.data === undefined ? null : (
            <VerificationsTable
              verifications={page.data.items}
              isLoading={page.status === 'loading'}
              onDevice={showDevice}
              {...(reference !== ''
                ? { emptyText: `No verification of this site has a reference beginning with ${reference}: it may be of another site, or older than the log keeps.` }
                : device !== ''
                  ? { emptyText: 'No verification of this device matches: its id may be of another site or week, or its rows older than the log keeps.' }
                  : {})}
            />
          )}
          {/* After a page failed to load, Newer leads back and Refresh retries from the newest; Older waits for a page. */}
          <nav class="pager" aria-label="Verification log pages">
            <button type="button" class="button button--small" disabled={pageNumber === 1} onClick={() => setCursors((previous) => previous.slice(0, -1))}>
              Newer
            </button>
            <span class="pager__position">Page {pageNumber}</span>
            <button
              type="button"
              class="button button--small"
              disabled={page.status !== 'ready' || page.data.nextCursor === null}
              onClick={() => {
                const next = page.status === 'ready' ? page.data.nextCursor : null
                if (next !== null) setCursors((previous) => [...previous, next])
              }}
            >
              Older
            </button>
          </nav>
        </>
      )}
    </section>
  )
}
