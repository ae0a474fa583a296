import { rangeLabels, rangeNames, type RangeName } from '../lib/time-range.js'

interface RangePickerProps {
  value: RangeName
  onChange: (range: RangeName) => void
}

/** A radio group: arrow keys move between ranges, as with any set of radio buttons. */
export function RangePicker({ value, onChange }: RangePickerProps) {
  return (
    <fieldset class="segmented">
      <legend class="visually-hidden">Time range</legend>
      {rangeNames.map((range) => (
        <label key={range} class={range === value ? 'segmented__option segmented__option--checked' : 'segmented__option'}>
          <input type="radio" name="range" value={range} checked={range === value} onChange={() => onChange(range)} />
          <span>{rangeLabels[range]}</span>
        </label>
      ))}
    </fieldset>
  )
}
