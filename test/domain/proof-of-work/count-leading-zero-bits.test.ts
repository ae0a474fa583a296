import { describe, expect, it } from 'vitest'
import { countLeadingZeroBits } from '../../../src/domain/proof-of-work/count-leading-zero-bits.js'

describe('countLeadingZeroBits', () => {
  it.each([
    [[0x80], 0],
    [[0x40], 1],
    [[0x01], 7],
    [[0x00, 0xff], 8],
    [[0x00, 0x00, 0x10], 19],
    [[0x00, 0x00, 0x00, 0x00, 0x01], 39],
    [[0x00, 0x00], 16],
    [[], 0],
  ])('%j begins with %i zero bits', (bytes, expected) => {
    expect(countLeadingZeroBits(Uint8Array.from(bytes))).toBe(expected)
  })

  it('counts a known SHA-256 digest (computed with Python hashlib)', () => {
    // SHA-256('0' * 64 + '20303') = 000089fd...: 16 zero bits, then 0x89 = 1000 1001.
    expect(countLeadingZeroBits(Buffer.from('000089fdc74b16a6ba1cd6b1b45ebb2090debbb7487cc8f354a382f9c4f2b9fd', 'hex'))).toBe(16)
    expect(countLeadingZeroBits(Buffer.from('0009c0e785df31c7372c7dbb5b12cdc684116ef0cd3439d745623ecf367d94ed', 'hex'))).toBe(12)
  })
})
