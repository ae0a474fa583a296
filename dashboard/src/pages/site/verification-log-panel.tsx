import { useCallback, useRef, useState } from 'preact/hooks'
import { fetchVerifications, removeVerificationLabel } from '../../api/analytics.js'
import { verificationActions, type Site, type Verification, type VerificationAction } from '../../api/types.js'
import { DownloadLinks } from '../../components/download-links.js'
import { ErrorNotice, Loading } from '../../components/notice.js'
import { EPHEMERAL_ID_PATTERN } from '../../../../src/domain/token/ephemeral-id-pattern.js'
import { ReferenceSearch } from '../../components/reference-search.js'
import { actionStyles } from '../../lib/actions.js'
import { isReference } from '../../lib/reference.js'
import { useAddressParam } from '../../lib/router.js'
import { canChangeSite } from '../../lib/site-access.js'
import { useLoader } from '../../lib/use-loader.js'
import { labelFilterNames, labelFilters, type LabelFilter } from '../../lib/verification-labels.js'
import { LabelDialog } from './verification-label.js'
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
  const [label, setLabel] = useAddressParam<LabelFilter | ''>('label', ['', ...labelFilters], '')
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
        ...(label === '' ? {} : { label }),
      }),
    [site.id, cursor, action, pageSize, reference, device, label],
  )
  const [page, reload] = useLoader(load, `${site.id}:${action}:${pageSize}:${reference}:${device}:${label}:${cursor ?? ''}`)
  const [labeling, setLabeling] = useState<Verification | undefined>(undefined)
  const [removingId, setRemovingId] = useState<string | undefined>(undefined)
  const [labelError, setLabelError] = useState<unknown>(undefined)
  const removeLabel = async (verification: Verification) => {
    setRemovingId(verification.id)
    setLabelError(undefined)
    try {
      await removeVerificationLabel(site.id, verification.id)
      reload()
    } catch (error) {
      setLabelError(error)
    } finally {
      setRemovingId(undefined)
    }
  }
  const findReference = (wanted: string) => {
    setReference(wanted)
    // A visitor's verification is sought whatever its action or device: a filter left on would hide it.
    if (wanted !== '') {
      setAction('')
      setDevice('')
      setLabel('')
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
          <FilterSelect
            id="log-action"
            label="Action"
            allLabel="All actions"
            values={verificationActions}
            nameOf={(name) => actionStyles[name].label}
            value={action}
            onChange={(next) => {
              setAction(next)
              setCursors([undefined])
            }}
          />
          <FilterSelect
            id="log-label"
            label="Label"
            allLabel="All labels"
            values={labelFilters}
            nameOf={(name) => labelFilterNames[name]}
            value={label}
            onChange={(next) => {
              setLabel(next)
              setCursors([undefined])
            }}
          />
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
          <DownloadLinks path={`/sites/${encodeURIComponent(site.id)}/verifications/export`} query={{ action, reference, device, label }} />
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
      {labelError === undefined ? null : <ErrorNotice error={labelError} />}
      {page.data === undefined && page.status === 'loading' ? <Loading /> : null}
      {page.data === undefined && page.status !== 'error' ? null : (
        <>
          {page.data === undefined ? null : (
            <VerificationsTable
              verifications={page.data.items}
              isLoading={page.status === 'loading'}
              onDevice={showDevice}
              {...(canChangeSite(site) ? { labeling: { onLabel: setLabeling, onRemove: (row: Verification) => void removeLabel(row), busyRowId: removingId } } : {})}
              {...(reference !== ''
                ? { emptyText: `No verification of this site has a reference beginning with ${reference}: it may be of another site, or older than the log keeps.` }
                : device !== ''
                  ? { emptyText: 'No verification of this device matches: its id may be of another site or week, or its rows older than the log keeps.' }
                  : label !== ''
                    ? { emptyText: `No verification in this view is ${label === 'none' ? 'unlabeled' : `labeled ${label}`}.` }
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
      <LabelDialog
        siteId={site.id}
        target={labeling}
        onLabeled={() => {
          setLabeling(undefined)
          reload()
        }}
        onClose={() => setLabeling(undefined)}
      />
    </section>
  )
}

interface FilterSelectProps<Value extends string> {
  id: string
  label: string
  /** The first option's text: no filter (the value ''). */
  allLabel: string
  values: readonly Value[]
  nameOf: (value: Value) => string
  value: Value | ''
  onChange: (value: Value | '') => void
}

/** One of the log's filters in the toolbar: its label, and a choice of all or one value. */
function FilterSelect<Value extends string>({ id, label, allLabel, values, nameOf, value, onChange }: FilterSelectProps<Value>) {
  return (
    <>
      <label for={id} class="toolbar__label">
        {label}
      </label>
      <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value as Value | '')}>
        <option value="">{allLabel}</option>
        {values.map((name) => (
          <option key={name} value={name}>
            {nameOf(name)}
          </option>
        ))}
      </select>
    </>
  )
}
