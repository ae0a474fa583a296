import { verificationActions, type StatsBucket } from '../../api/types.js'
import { actionStyles } from '../../lib/actions.js'
import { hourBucketLabels } from '../../lib/chart-time.js'
import { formatNumber, timeZoneName } from '../../lib/format.js'
import { TableScroll } from '../../components/table-scroll.js'

// Daily buckets are UTC days: named in UTC, or west of Greenwich each would carry the day before's date.
const dayFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' })

export function BucketsTable({ series, interval }: { series: readonly StatsBucket[]; interval: 'hour' | 'day' }) {
  const times = series.map((point) => Date.parse(point.bucket))
  // Hours name their zone too when its offset changes in the range (a daylight-saving change).
  const labels = interval === 'hour' ? hourBucketLabels(times) : times.map((time) => dayFormat.format(time))
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
          {series.map((point, index) => (
            <tr key={point.bucket}>
              <th scope="row">{labels[index]}</th>
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
