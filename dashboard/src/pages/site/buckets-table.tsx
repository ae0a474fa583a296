import { verificationActions, type StatsBucket } from '../../api/types.js'
import { actionStyles } from '../../lib/actions.js'
import { formatNumber, timeZoneName } from '../../lib/format.js'
import { TableScroll } from '../../components/table-scroll.js'

const hourFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
// Daily buckets are UTC days: named in UTC, or west of Greenwich each would carry the day before's date.
const dayFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' })

export function BucketsTable({ series, interval }: { series: readonly StatsBucket[]; interval: 'hour' | 'day' }) {
  const format = interval === 'hour' ? hourFormat : dayFormat
  return (
    <TableScroll title="Verifications per bucket">
      <table class="table buckets">
        <thead>
          <tr>
            <th scope="col">{interval === 'hour' ? `Hour starting (${timeZoneName})` : 'Day (UTC)'}</th>
            {verificationActions.map((action) => (
              <th key={action} scope="col" class="numeric">
                {actionStyles[action].label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {series.map((point) => (
            <tr key={point.bucket}>
              <th scope="row">{format.format(new Date(point.bucket))}</th>
              {verificationActions.map((action) => (
                <td key={action} class="numeric" data-action={action}>
                  {formatNumber(point[action])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  )
}
