import { describe, expect, it } from 'vitest'
import { formatPercent } from '../../dashboard/src/lib/format.js'

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
