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

interface RankedHeadProps {
  /** The first column's heading. */
  name: string
  /** The share column's heading ("Of all"). */
  share: string
  /** Headings of more numbers after the share (the labels of a score's verifications). */
  extraColumns?: readonly string[]
}

/** The head of a ranked table: the row's name, its count and its share. */
export function RankedHead({ name, share, extraColumns = [] }: RankedHeadProps) {
  return (
    <thead>
      <tr>
        <th scope="col">{name}</th>
        <th scope="col" class="numeric">
          Count
        </th>
        <th scope="col" class="numeric">
          {share}
        </th>
        {extraColumns.map((heading) => (
          <th key={heading} scope="col" class="numeric">
            {heading}
          </th>
        ))}
      </tr>
    </thead>
  )
}

interface RankedRowProps {
  label: string
  count: number
  /** The largest count of the table: its bar is full width. */
  max: number
  /** What the share is of. */
  total: number
  /** The bar's colour, when it means something beside the numbers. */
  barColor?: string
  /** More numbers after the share, under RankedHead's extraColumns. */
  extraCounts?: readonly number[]
  [attribute: `data-${string}`]: string | number
}

/** One row of a ranked table: the label with a bar (decoration: the numbers are in the cells), the count and the share. */
export function RankedRow({ label, count, max, total, barColor, extraCounts = [], ...data }: RankedRowProps) {
  return (
    <tr {...data}>
      <th scope="row">
        <span class="ranked__label">{label}</span>
        <span
          class="ranked__bar"
          aria-hidden="true"
          style={{ width: `${max === 0 ? 0 : (count / max) * 100}%`, ...(barColor === undefined ? {} : { background: barColor }) }}
        />
      </th>
      <td class="numeric">{formatNumber(count)}</td>
      <td class="numeric">{formatPercent(count, total)}</td>
      {extraCounts.map((extra, index) => (
        <td key={index} class="numeric">
          {formatNumber(extra)}
        </td>
      ))}
    </tr>
  )
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
          <RankedHead name="Name" share="Of all" />
          <tbody>
            {items.map((item) => (
              <RankedRow key={item.label} label={formatLabel(item.label)} count={item.count} max={max} total={total} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
