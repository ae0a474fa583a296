import { formatNumber, formatPercent } from '../lib/format.js'

interface RankedListProps {
  id: string
  title: string
  items: readonly { label: string; count: number }[]
  emptyText: string
  formatLabel?: (label: string) => string
  /** What the share is of: all verifications in the range, so one row can have 100%. */
  total: number
}

/** A top-N table with a bar per row; the bar is decoration, the numbers are in the cells. */
export function RankedList({ id, title, items, emptyText, formatLabel = (label) => label, total }: RankedListProps) {
  const max = items.reduce((largest, item) => Math.max(largest, item.count), 0)
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {items.length === 0 ? (
        <p class="muted">{emptyText}</p>
      ) : (
        <table class="table ranked">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col" class="numeric">
                Count
              </th>
              <th scope="col" class="numeric">
                Of all
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item.label}>
                <th scope="row">
                  <span class="ranked__label">{formatLabel(item.label)}</span>
                  <span class="ranked__bar" aria-hidden="true" style={{ width: `${max === 0 ? 0 : (item.count / max) * 100}%` }} />
                </th>
                <td class="numeric">{formatNumber(item.count)}</td>
                <td class="numeric">{formatPercent(item.count, total)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
