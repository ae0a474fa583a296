import { describe, expect, it } from 'vitest'
import { OTHER_VALUES } from '../../dashboard/src/api/types.js'
import { formatPercent, formatRankedValue } from '../../dashboard/src/lib/format.js'
import { OTHER_ROLLUP_VALUE } from '../../src/storage/sql/rollup-values.js'

describe('formatPercent', () => {
  it('rounds to whole percents, but never shows a few as none or nearly all as all', () => {
    expect(formatPercent(0, 0)).toBe('0%')
    expect(formatPercent(0, 300)).toBe('0%')
    expect(formatPercent(1, 300)).toBe('<1%')
    expect(formatPercent(2, 300)).toBe('1%')
    expect(formatPercent(150, 300)).toBe('50%')
    expect(formatPercent(299, 300)).toBe('>99%')
    expect(formatPercent(300, 300)).toBe('100%')
  })
})

describe('formatRankedValue', () => {
  it("names the stats' reserved value for the hostnames and page actions beyond an hour's bound, and shows any other as it is", () => {
    expect(formatRankedValue('<other>', 'Other hostnames')).toBe('Other hostnames')
    expect(formatRankedValue('shop.example', 'Other hostnames')).toBe('shop.example')
    expect(formatRankedValue('other', 'Other actions')).toBe('other')
    // The dashboard's spelling of the reserved value is the server's.
    expect(OTHER_VALUES).toBe(OTHER_ROLLUP_VALUE)
  })
})
