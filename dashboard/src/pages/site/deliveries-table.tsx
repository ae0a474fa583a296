import type { WebhookDelivery } from '../../api/types.js'
import { Link } from '../../components/link.js'
import { ErrorNotice, Loading } from '../../components/notice.js'
import { BusyButton } from '../../components/busy-button.js'
import { canResend, outcomeLabels } from '../../lib/delivery-outcomes.js'
import { formatDateTimeWithSeconds, timeZoneName } from '../../lib/format.js'
import { referenceOf } from '../../lib/reference.js'
import type { Loaded } from '../../lib/use-loader.js'
import { TableScroll } from '../../components/table-scroll.js'

/** The Resend buttons, for those who may change the site: what a press does, and the delivery being resent. */
export interface ResendControls {
  onResend: (delivery: WebhookDelivery) => void
  sendingId: string | null
}

export function DeliveriesTable({ siteId, deliveries, resend }: { siteId: string; deliveries: Loaded<WebhookDelivery[]>; resend?: ResendControls }) {
  if (deliveries.status === 'error') return <ErrorNotice error={deliveries.error} />
  if (deliveries.data === undefined) return <Loading />
  if (deliveries.data.length === 0) return <p class="muted">No deliveries.</p>
  return (
    <TableScroll title="Recent deliveries">
      <table class="table">
        <thead>
          <tr>
            <th scope="col">Time ({timeZoneName})</th>
            <th scope="col">Event</th>
            <th scope="col">Outcome</th>
            <th scope="col">Status</th>
            <th scope="col">Latency</th>
            <th scope="col">Error</th>
            <th scope="col">Verification</th>
            <th scope="col">Delivery ID</th>
            {resend === undefined ? null : (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {deliveries.data.map((delivery) => (
            <tr key={delivery.id}>
              <td class="nowrap">{formatDateTimeWithSeconds(delivery.createdAt)}</td>
              <td>
                <span class="code">{delivery.event}</span>
                {delivery.test ? <span class="badge badge--test">test</span> : null}
                {delivery.redeliveryOf === null ? null : (
                  <span class="badge badge--test" title={`A resend of ${delivery.redeliveryOf}, under its id`}>
                    resent
                  </span>
                )}
              </td>
              <td>
                <span class={delivery.outcome === 'delivered' ? 'badge badge--ok' : 'badge badge--bad'}>{outcomeLabels[delivery.outcome]}</span>
              </td>
              <td>{delivery.statusCode ?? '—'}</td>
              <td class="nowrap">{delivery.latencyMs} ms</td>
              <td>{delivery.error ?? ''}</td>
              {/* The blocked verification it told of, found in the site's log by its whole id; none for surges and tests. */}
              <td class="nowrap">
                {delivery.verificationId === null ? (
                  '—'
                ) : (
                  <Link to={{ name: 'site', siteId, tab: 'log' }} query={{ reference: delivery.verificationId }}>
                    <span class="code">{referenceOf(delivery.verificationId)}</span>
                  </Link>
                )}
              </td>
              {/* What the receiver got as X-Service-Delivery, webhook-id and the body's id (a resend carried its first delivery's). */}
              <td class="nowrap code">{delivery.redeliveryOf ?? delivery.id}</td>
              {resend === undefined ? null : (
                <td class="nowrap">
                  {canResend(delivery) ? (
                    <BusyButton
                      type="button"
                      class="button button--small"
                      aria-label={`Resend the event of ${formatDateTimeWithSeconds(delivery.createdAt)}`}
                      onClick={() => resend.onResend(delivery)}
                      isBusy={resend.sendingId !== null}
                    >
                      {resend.sendingId === delivery.id ? 'Resending…' : 'Resend'}
                    </BusyButton>
                  ) : null}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  )
}
