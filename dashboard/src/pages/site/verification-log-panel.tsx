import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { fetchVerifications, removeVerificationLabel } from '../../api/analytics.js'
import { verificationActions, type ListDecision, type Site, type Verification, type VerificationAction, type VerificationLabel, type VerificationPage } from '../../api/types.js'
import { BusyButton } from '../../components/busy-button.js'
import { ConfirmDialog } from '../../components/confirm-dialog.js'
import { DownloadLinks } from '../../components/download-links.js'
import { ErrorNotice, Loading } from '../../components/notice.js'
import { LIST_DECISIONS } from '../../../../src/domain/sites/list-decision.js'
import { EPHEMERAL_ID_PATTERN } from '../../../../src/domain/token/ephemeral-id-pattern.js'
import { ReferenceSearch } from '../../components/reference-search.js'
import { actionStyles } from '../../lib/actions.js'
import { formatNumber } from '../../lib/format.js'
import { isReference, referenceOf } from '../../lib/reference.js'
import { useAddressParam } from '../../lib/router.js'
import { canChangeSite } from '../../lib/site-access.js'
import { useLoader } from '../../lib/use-loader.js'
import { isVerificationId, labelFilterNames, labelFilters, labelNames, type LabelFilter } from '../../lib/verification-labels.js'
import { LabelDialog } from './verification-label.js'
import { VerificationsTable } from './verifications-table.js'

const pageSizes = [10, 25, 50, 100] as const

/** The "Decided by" filter's choices: the site's list that decided a row instead of the risk model (its badge). */
const listDecisionNames: Record<ListDecision, string> = { allowlist: 'The allowlist', blocklist: 'The blocklist' }

const devicePattern = new RegExp(EPHEMERAL_ID_PATTERN)

/** A device as the API names it (its ephemeral id), as the API checks it. */
const isDevice = (text: string): text is string => devicePattern.test(text)

type PageQuery = Parameters<typeof fetchVerifications>[1]

/** What a whole UUID searched for found: a row by its own id (a reference in full), or else rows by Siteverify's verification_id. */
interface UuidLookup {
  /** The UUID searched for, as typed: the page answers this search, not one typed since. */
  reference: string
  isRowId: boolean
}

type LogPage = VerificationPage & { lookup?: UuidLookup }

/** A page of the log as shown, with what its status line says of it. */
type ShownPage = LogPage & { description: string }

/**
 * The log's page for the search box's text. A whole UUID may be a row's id (a reference in full)
 * or the verification_id Siteverify answered the site's backend: the API's verificationId filter
 * matches either, and the rows found are shown newest first (a handful at most, on one page);
 * `lookup` says whether a row's own id was it.
 */
async function fetchLogPage(siteId: string, query: PageQuery): Promise<LogPage> {
  const { reference } = query
  if (reference === undefined || !isVerificationId(reference)) return fetchVerifications(siteId, query)
  const { reference: _reference, cursor: _cursor, ...rest } = query
  const { items } = await fetchVerifications(siteId, { ...rest, verificationId: reference })
  return { items, nextCursor: null, lookup: { reference, isRowId: items.some((item) => item.id === reference.toLowerCase()) } }
}

/** The log's filters and search as the address holds them ('' for none). */
interface LogFilters {
  action: string
  reference: string
  device: string
  label: string
  decidedBy: string
}

/** What an empty page of the log says: why the filter or search shown found nothing. */
function emptyTextOf({ reference, device, label, decidedBy }: LogFilters): string {
  if (reference !== '') {
    return `No verification of this site has a reference beginning with ${reference}${isVerificationId(reference) ? ' or this verification_id' : ''}: it may be of another site, or older than the log keeps.`
  }
  if (device !== '') return 'No verification of this device matches: its id may be of another site or week, or its rows older than the log keeps.'
  if (label !== '') return `No verification in this view is ${label === 'none' ? 'unlabeled' : `labeled ${label}`}.`
  if (decidedBy !== '') return `No verification in this view was decided by the ${decidedBy}.`
  return 'No verifications match.'
}

/** The log's status line for a page loaded: how many rows it shows, or why none. */
function describePage(count: number, pageNumber: number, filters: LogFilters): string {
  if (count === 0) return emptyTextOf(filters)
  const shown = count === 1 ? 'one verification' : `${formatNumber(count)} verifications`
  return `Showing ${shown}${pageNumber === 1 ? '' : ` on page ${pageNumber}`}.`
}

/**
 * The export's filters for the log shown. A whole UUID is exported as what it found: a row's own id
 * when a row has it, else Siteverify's verification_id (what a backend quotes); a shorter reference
 * as the rows' ids. Which one a UUID is, only the page loaded for that very search says: while a new
 * search loads, the page shown is the previous one's (null: not known yet).
 */
function exportQueryOf(filters: LogFilters, page: LogPage | undefined) {
  const { reference, ...rest } = filters
  if (!isVerificationId(reference)) return { ...rest, reference }
  if (page?.lookup?.reference !== reference) return null
  return page.lookup.isRowId ? { ...rest, reference } : { ...rest, verificationId: reference }
}

export function VerificationLogPanel({ site }: { site: Site }) {
  const [action, setAction] = useAddressParam<VerificationAction | ''>('action', ['', ...verificationActions], '')
  const [pageSizeText, setPageSizeText] = useAddressParam('rows', pageSizes.map(String), '25')
  const pageSize = Number(pageSizeText)
  const [reference, setReference] = useAddressParam<string>('reference', isReference, '')
  const [device, setDevice] = useAddressParam<string>('device', isDevice, '')
  const [label, setLabel] = useAddressParam<LabelFilter | ''>('label', ['', ...labelFilters], '')
  const [decidedBy, setDecidedBy] = useAddressParam<ListDecision | ''>('decidedBy', ['', ...LIST_DECISIONS], '')
  // Cursors of the pages seen so far: the last one is the current page; going back pops it.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined])
  const cursor = cursors[cursors.length - 1]
  const pageNumber = cursors.length
  const load = useCallback(async (): Promise<ShownPage> => {
    const loaded = await fetchLogPage(site.id, {
      limit: pageSize,
      ...(cursor === undefined ? {} : { cursor }),
      ...(action === '' ? {} : { action }),
      ...(reference === '' ? {} : { reference }),
      ...(device === '' ? {} : { device }),
      ...(label === '' ? {} : { label }),
      ...(decidedBy === '' ? {} : { decidedBy }),
    })
    // Described with the view it was loaded for: the filters may change before it is shown.
    return { ...loaded, description: describePage(loaded.items.length, pageNumber, { action, reference, device, label, decidedBy }) }
  }, [site.id, cursor, pageNumber, action, pageSize, reference, device, label, decidedBy])
  const [page, reload] = useLoader(load, `${site.id}:${action}:${pageSize}:${reference}:${device}:${label}:${decidedBy}:${cursor ?? ''}`)
  const [labeling, setLabeling] = useState<Verification | undefined>(undefined)
  // The row whose label is asked to be removed (the confirmation is open while there is one).
  const [unlabeling, setUnlabeling] = useState<Verification | undefined>(undefined)
  const [isRemoving, setIsRemoving] = useState(false)
  const [labelError, setLabelError] = useState<unknown>(undefined)
  // What the last label change did, announced politely ("Labeled fraudulent", "Label removed").
  const [labelStatus, setLabelStatus] = useState('')
  // The row just labeled or unlabeled: its buttons stay busy until the reload shows its new label,
  // then the keyboard goes back to it.
  const [changedRowId, setChangedRowId] = useState<string | undefined>(undefined)
  const tableArea = useRef<HTMLDivElement>(null)
  const changed = (rowId: string, status: string) => {
    setLabelError(undefined)
    setLabelStatus(status)
    setChangedRowId(rowId)
    reload()
  }
  useEffect(() => {
    if (changedRowId === undefined || page.status === 'loading') return
    setChangedRowId(undefined)
    // The row's label button if the row is still shown (a label filter may have dropped it), else the
    // table, else (no row left) the area that held it, focusable for this alone (tabIndex -1).
    const area = tableArea.current
    const button = area?.querySelector<HTMLElement>(`tr[data-id="${changedRowId}"] .log__label-actions button`)
    window.requestAnimationFrame(() => (button ?? area?.querySelector<HTMLElement>('[role="region"]') ?? area)?.focus())
  }, [page])
  const removeLabel = async (verification: Verification) => {
    setIsRemoving(true)
    setLabelError(undefined)
    try {
      await removeVerificationLabel(site.id, verification.id)
      setUnlabeling(undefined)
      changed(verification.id, 'Label removed')
    } catch (error) {
      setUnlabeling(undefined)
      setLabelError(error)
    } finally {
      setIsRemoving(false)
    }
  }
  /** A filter or search changed: back to the first page, and the last label change's error is stale. */
  const refilter = () => {
    setCursors([undefined])
    setLabelError(undefined)
  }
  /** A filter's setter that also goes back to the first page (refilter). */
  const refiltering =
    <Value,>(set: (value: Value) => void) =>
    (value: Value) => {
      set(value)
      refilter()
    }
  const findReference = (wanted: string) => {
    setReference(wanted)
    // A visitor's verification is sought whatever its action, device, label or deciding list: a filter left on would hide it.
    if (wanted !== '') {
      setAction('')
      setDevice('')
      setLabel('')
      setDecidedBy('')
    }
    refilter()
  }
  const heading = useRef<HTMLHeadingElement>(null)
  const showDevice = (wanted: string) => {
    setDevice(wanted)
    // All the device's verifications, not the one row a reference found.
    if (wanted !== '') setReference('')
    refilter()
    // The button pressed goes with the rows it was in: the log's heading keeps the keyboard's place.
    heading.current?.focus()
  }
  const choosePageSize = refiltering(setPageSizeText)

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
            onChange={refiltering(setAction)}
          />
          <FilterSelect
            id="log-label"
            label="Label"
            allLabel="All labels"
            values={labelFilters}
            nameOf={(name) => labelFilterNames[name]}
            value={label}
            onChange={refiltering(setLabel)}
          />
          <FilterSelect
            id="log-decided-by"
            label="Decided by"
            allLabel="The model or a list"
            values={LIST_DECISIONS}
            nameOf={(name) => listDecisionNames[name]}
            value={decidedBy}
            onChange={refiltering(setDecidedBy)}
          />
          <label for="log-page-size" class="toolbar__label">
            Rows
          </label>
          <select
            id="log-page-size"
            value={String(pageSize)}
            onChange={(event) => choosePageSize(event.currentTarget.value)}
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
              setLabelError(undefined)
              if (cursors.length > 1) setCursors([undefined])
              else reload()
            }}
          >
            Refresh
          </button>
          <DownloadLinks
            path={`/sites/${encodeURIComponent(site.id)}/verifications/export`}
            query={exportQueryOf({ action, reference, device, label, decidedBy }, page.data)}
          />
        </div>
      </div>
      <ReferenceSearch
        id="log"
        reference={reference}
        onFind={findReference}
        idleHint="A visitor who was turned away is shown a reference: find their verification by it, or by the whole verification_id Siteverify answered your server."
        clearLabel="Show all"
        findsVerificationIds
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
      <p role="status" class="visually-hidden">
        {labelStatus}
      </p>
      {page.data === undefined && page.status === 'loading' ? <Loading /> : null}
      {/* The area that held the rows takes the keyboard when a label change leaves none (tabIndex -1). */}
      <div ref={tableArea} tabIndex={-1}>
        {/* Said politely whenever a page loads (a filter chosen, another page): blank while it loads, and in place, so that it is announced. */}
        <p role="status" class="muted log__count">
          {page.status === 'ready' ? page.data.description : ''}
        </p>
        {page.data === undefined || page.data.items.length === 0 ? null : (
          <VerificationsTable
            verifications={page.data.items}
            isLoading={page.status === 'loading'}
            onDevice={showDevice}
            {...(canChangeSite(site) ? { labeling: { onLabel: setLabeling, onRemove: setUnlabeling, busyRowId: changedRowId } } : {})}
          />
        )}
      </div>
      {page.data === undefined && page.status !== 'error' ? null : (
        <>
          {/* After a page failed to load, Newer leads back and Refresh retries from the newest; Older waits for a page.
              Busy, not disabled: a press of either may leave it with nothing to do (Older while its page loads and
              on the last page, Newer on the first), and a disabled button would drop the focus to the page's start. */}
          <nav class="pager" aria-label="Verification log pages">
            <BusyButton type="button" class="button button--small" isBusy={pageNumber === 1} onClick={() => setCursors((previous) => previous.slice(0, -1))}>
              Newer
            </BusyButton>
            <span class="pager__position">Page {pageNumber}</span>
            <BusyButton
              type="button"
              class="button button--small"
              isBusy={page.status !== 'ready' || page.data.nextCursor === null}
              onClick={() => {
                const next = page.status === 'ready' ? page.data.nextCursor : null
                if (next !== null) setCursors((previous) => [...previous, next])
              }}
            >
              Older
            </BusyButton>
          </nav>
        </>
      )}
      <LabelDialog
        siteId={site.id}
        target={labeling}
        onLabeled={(chosen: VerificationLabel) => {
          const row = labeling
          setLabeling(undefined)
          if (row !== undefined) changed(row.id, `Labeled ${labelNames[chosen].toLowerCase()}`)
        }}
        onClose={() => setLabeling(undefined)}
      />
      <ConfirmDialog
        title="Remove label"
        confirmLabel="Remove label"
        isOpen={unlabeling !== undefined}
        isBusy={isRemoving}
        onConfirm={() => {
          if (unlabeling !== undefined) void removeLabel(unlabeling)
        }}
        onCancel={() => setUnlabeling(undefined)}
      >
        {unlabeling === undefined || unlabeling.label === null ? null : (
          <p>
            Remove the {labelNames[unlabeling.label].toLowerCase()} label of verification <span class="code">{referenceOf(unlabeling.id)}</span>? What a
            fraudulent label added to its client's history stays until its window ends.
          </p>
        )}
      </ConfirmDialog>
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
