import { useCallback, useEffect, useRef } from 'preact/hooks'
import { AUDIT_ACTIONS, type AuditAction } from '../../../src/domain/audit/audit-actions.js'
import { isUuid } from '../../../src/domain/uuid.js'
import { fetchAuditLog, listLoggedSites, type LoggedSite } from '../api/audit-log.js'
import { listSites } from '../api/sites.js'
import type { AuditEvent, Site } from '../api/types.js'
import { BusyButton } from '../components/busy-button.js'
import { DownloadLinks } from '../components/download-links.js'
import { ErrorNotice, Loading } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { auditActionGroups } from '../lib/audit-events.js'
import { formatNumber } from '../lib/format.js'
import { useAddressParam } from '../lib/router.js'
import { useAppendedPages, type AppendedPages } from '../lib/use-appended-pages.js'
import { useLoader, type Loaded } from '../lib/use-loader.js'
import { EventsTable } from './activity/events-table.js'

const PAGE_SIZE = 50

/** A site as the API names it, as the API checks it (the site may be deleted since). */
const isSiteId = (text: string): text is string => isUuid(text)

/**
 * The account's audit log: who changed what, when and from where. The site and action filters
 * are kept in the address (`?site=…&action=site.updated`), which a site's page links to.
 */
export function ActivityPage() {
  const [siteText, setSiteId] = useAddressParam<string>('site', isSiteId, '')
  const siteId = siteText.toLowerCase()
  const [action, setAction] = useAddressParam<AuditAction | ''>('action', ['', ...AUDIT_ACTIONS], '')
  const [sites] = useLoader(listSites, 'sites')
  const [loggedSites] = useLoader(listLoggedSites, 'logged-sites')
  const load = useCallback(
    (cursor: string | undefined) =>
      fetchAuditLog({
        limit: PAGE_SIZE,
        ...(cursor === undefined ? {} : { cursor }),
        ...(siteId === '' ? {} : { siteId }),
        ...(action === '' ? {} : { action }),
      }),
    [siteId, action],
  )
  const events = useAppendedPages(load, `${siteId}:${action}`)
  const isFiltered = siteId !== '' || action !== ''

  return (
    <>
      <PageHeading title="Activity" />
      <p class="muted">
        Who did what in your account, and from where: log-ins and failed ones, password changes, sessions logged out, API keys, and every change
        to a site, its keys and its webhook.
      </p>
      <section class="card" aria-labelledby="activity-heading">
        <div class="card__heading">
          <h2 id="activity-heading">Events</h2>
          <div class="toolbar">
            <label for="activity-site" class="toolbar__label">
              Site
            </label>
            <select id="activity-site" value={siteId} onChange={(event) => setSiteId(event.currentTarget.value)}>
              <option value="">All sites</option>
              {siteChoices(sites, loggedSites, siteId, events.items).map((site) => (
                <option key={site.id} value={site.id}>
                  {site.name}
                </option>
              ))}
            </select>
            <label for="activity-action" class="toolbar__label">
              Action
            </label>
            <select id="activity-action" value={action} onChange={(event) => setAction(event.currentTarget.value as AuditAction | '')}>
              <option value="">All actions</option>
              {auditActionGroups.map((group) => (
                <optgroup key={group.label} label={group.label}>
                  {group.actions.map((choice) => (
                    <option key={choice.action} value={choice.action}>
                      {choice.label}
                    </option>
                  ))}
                </optgroup>
              ))}
            </select>
            <button type="button" class="button button--small" onClick={events.reload}>
              Refresh
            </button>
            <DownloadLinks path="/audit-log/export" query={{ siteId, action }} />
          </div>
        </div>
        {sites.status === 'error' ? <ErrorNotice error={sites.error} /> : null}
        <EventList events={events} isFiltered={isFiltered} />
      </section>
    </>
  )
}

/**
 * The account's sites, then those its log has events of that it no longer has (transferred away,
 * no longer shared, deleted: their events stay), named as their newest event recorded them; and
 * the one filtered by if it is among none of them.
 */
function siteChoices(
  sites: Loaded<Site[]>,
  loggedSites: Loaded<LoggedSite[]>,
  siteId: string,
  events: readonly AuditEvent[] | undefined,
): { id: string; name: string }[] {
  const current = (sites.data ?? []).map(({ id, name }) => ({ id, name }))
  const former =
    sites.data === undefined
      ? []
      : (loggedSites.data ?? [])
          .filter((logged) => !current.some((site) => site.id === logged.id))
          .sort((first, second) => first.name.localeCompare(second.name))
          .map(({ id, name, deleted }) => ({ id, name: `${name} (${deleted ? 'deleted' : 'no access'})` }))
  const choices = [...current, ...former]
  if (siteId === '' || choices.some((site) => site.id === siteId)) return choices
  const recorded = events?.find((event) => event.site?.id === siteId)?.site?.name
  const name = sites.data === undefined ? (recorded ?? 'This site') : `${recorded ?? 'A site'} (deleted)`
  return [...choices, { id: siteId, name }]
}

function describeCount(count: number, hasOlder: boolean, isFiltered: boolean): string {
  if (count === 0) return isFiltered ? 'No events match.' : 'No events yet.'
  if (hasOlder) return `Showing the newest ${formatNumber(count)} events.`
  return count === 1 ? 'Showing the one event.' : `Showing all ${formatNumber(count)} events.`
}

function EventList({ events, isFiltered }: { events: AppendedPages<AuditEvent>; isFiltered: boolean }) {
  const end = useRef<HTMLParagraphElement>(null)
  // "Show older events" goes once the oldest is shown: the keyboard's place is the list's end.
  const isFocusOnOlder = useRef(false)
  useEffect(() => {
    // A filter chosen or a refresh meanwhile: its list is not the one whose end was asked for.
    if (events.status === 'loading') isFocusOnOlder.current = false
  }, [events.status])
  useEffect(() => {
    if (events.hasOlder || !isFocusOnOlder.current) return
    isFocusOnOlder.current = false
    // Only when the focus went with the button: not when the keyboard moved on while it loaded.
    if (document.activeElement === null || document.activeElement === document.body) end.current?.focus()
  }, [events.hasOlder])
  const { items } = events
  return (
    <>
      {/* The count is announced politely whenever it changes: a filter chosen, older events shown. */}
      <p role="status" class="activity__count">
        {items === undefined || events.status === 'loading' ? '' : describeCount(items.length, events.hasOlder, isFiltered)}
      </p>
      {events.status === 'error' ? <ErrorNotice error={events.error} /> : null}
      {items === undefined && events.status === 'loading' ? <Loading /> : null}
      {items === undefined || items.length === 0 ? null : (
        <>
          <EventsTable events={items} isLoading={events.status === 'loading'} />
          {events.olderError === undefined ? null : <ErrorNotice error={events.olderError} />}
          <div class="pager">
            {events.hasOlder ? (
              <BusyButton
                type="button"
                class="button button--small"
                isBusy={events.isLoadingOlder}
                isDisabled={events.status !== 'ready'}
                onClick={(event) => {
                  isFocusOnOlder.current = document.activeElement === event.currentTarget
                  events.showOlder()
                }}
              >
                {events.isLoadingOlder ? 'Loading older events…' : 'Show older events'}
              </BusyButton>
            ) : (
              <p ref={end} tabIndex={-1} class="muted activity__end">
                No older events.
              </p>
            )}
          </div>
        </>
      )}
    </>
  )
}
