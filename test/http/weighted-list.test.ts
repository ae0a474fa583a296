import { describe, expect, it } from 'vitest'
import { parseWeightedList } from '../../src/http/weighted-list.js'

/** The entries as `value q index`, for comparing a whole list at a glance. */
const read = (header: string | undefined, maxEntries = 32) => parseWeightedList(header, maxEntries).map(({ value, q, index }) => `${value} ${q} ${index}`)

describe('parseWeightedList', () => {
  it('reads each element of the list with its weight (1 when it has none) and its position, lowercased', () => {
    expect(read('gzip, deflate, br, zstd')).toEqual(['gzip 1 0', 'deflate 1 1', 'br 1 2', 'zstd 1 3'])
    expect(read('de-DE,de;q=0.9,en;q=0.8')).toEqual(['de-de 1 0', 'de 0.9 1', 'en 0.8 2'])
    expect(read('GZIP;q=0.5, Zh-Hant-TW')).toEqual(['gzip 0.5 0', 'zh-hant-tw 1 1'])
    expect(read('*;q=0')).toEqual(['* 0 0'])
  })

  it('reads nothing from an absent or empty header, and skips empty elements', () => {
    expect(read(undefined)).toEqual([])
    expect(read('')).toEqual([])
    expect(read(' , ,')).toEqual([])
    // Positions stay those of the header, empty elements counted.
    expect(read(',,;q=1, ;, br')).toEqual(['br 1 4'])
  })

  it('reads the weight case-insensitively, with optional whitespace around `;` and `=`', () => {
    for (const header of ['de;q=0', 'de;Q=0', 'de ; q=0', 'de;q = 0', 'de; Q =0 ', 'de\t;\tq\t=\t0']) expect(read(header), header).toEqual(['de 0 0'])
  })

  it('takes a weight from 0 to 1 with up to three decimals (RFC 9110, section 12.4.2)', () => {
    expect(read('a;q=0, b;q=0., c;q=0.5, d;q=0.125, e;q=1, f;q=1., g;q=1.000')).toEqual(['a 0 0', 'b 0 1', 'c 0.5 2', 'd 0.125 3', 'e 1 4', 'f 1 5', 'g 1 6'])
  })

  it('skips an element whose weight it cannot read, rather than give it some weight', () => {
    for (const weight of ['abc', '', '2', '1.5', '1.999', '1.001', '-1', '0.1234', '.5', '+0.5', '1e0', '0x1', '"0.5"']) {
      expect(read(`de;q=${weight}, fr;q=0.5`), weight).toEqual(['fr 0.5 1'])
    }
    // A `q` without a value is no weight either.
    expect(read('de;q, fr')).toEqual(['fr 1 1'])
  })

  it('passes over other parameters, before or after the weight, and takes the first weight', () => {
    expect(read('br;level=5;q=0.9, gzip;q=0.5;x=y')).toEqual(['br 0.9 0', 'gzip 0.5 1'])
    expect(read('br;qq=0;quality=0')).toEqual(['br 1 0'])
    expect(read('br;q=0.2;q=0.9')).toEqual(['br 0.2 0'])
  })

  it('reads no more than maxEntries elements, so that a long header costs no more than a browser\'s', () => {
    expect(read('a, b, c, d', 2)).toEqual(['a 1 0', 'b 1 1'])
    expect(read(`${'x,'.repeat(10_000)}br`)).toHaveLength(32)
    expect(read(`${'x,'.repeat(10_000)}br`).some((entry) => entry.startsWith('br '))).toBe(false)
  })
})
