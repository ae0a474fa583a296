import type { AuditEvent } from '../../api/types.js'
import { describeActor, describeAuditEvent, describeOrigin } from '../../lib/audit-events.js'
import { formatDateTimeWithSeconds, timeZoneName } from '../../lib/format.js'
import { TableScroll } from '../../components/table-scroll.js'

interface EventsTableProps {
  events: readonly AuditEvent[]
  isLoading: boolean
}

/**
 * The audit log's events, newest first. On a phone each row stands as a block of its own (the
 * column headings hidden, a "By" and "From" shown instead), so that the sentences are not
 * squeezed into a column or scrolled sideways.
 */
export function EventsTable({ events, isLoading }: EventsTableProps) {
  return (
    <TableScroll title="Events" isBusy={isLoading}>
      <table class="table activity">
        <thead>
          <tr>
            <th scope="col">When ({timeZoneName})</th>
            <th scope="col">What</th>
            <th scope="col">Who</th>
            <th scope="col">From</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => {
            const origin = describeOrigin(event.actor)
            return (
              <tr key={event.id} data-id={event.id} data-action={event.action} data-site={event.site?.id}>
                <td class="nowrap activity__when">
                  <time dateTime={event.createdAt}>{formatDateTimeWithSeconds(event.createdAt)}</time>
                </td>
                <td class="activity__what">{describeAuditEvent(event)}</td>
                <td class="activity__who">
                  <span class="activity__label">By </span>
                  {describeActor(event.actor)}
                </td>
                <td class="activity__from">
                  <span class="activity__label">From </span>
                  <span class="code">{origin.address}</span>
                  {origin.browser === undefined ? null : (
                    <span class="muted activity__browser" title={event.actor.userAgent ?? undefined}>
                      {origin.browser}
                    </span>
                  )}
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </TableScroll>
  )
}
