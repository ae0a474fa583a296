import { createHmac, createSecretKey, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { keyedSha256, MAX_TEXT_LENGTH } from '../../src/domain/keyed-sha256.js'
import { hmacSha256 } from '../../src/domain/mac.js'

const openSsl = (key: Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest('hex')

describe('HMAC-SHA256 from cached midstates', () => {
  it('gives RFC 4231 test case 2 (a 4-byte key)', () => {
    const key = createSecretKey(Buffer.from('Jefe'))
    expect(keyedSha256(key, 'what do ya want for nothing?').toString('hex')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843')
  })

  it('gives RFC 4231 test case 6 (a 131-byte key, hashed first)', () => {
    const key = createSecretKey(Buffer.alloc(131, 0xaa))
    expect(keyedSha256(key, 'Test Using Larger Than Block-Size Key - Hash Key First').toString('hex')).toBe(
      '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
    )
  })

  it("equals OpenSSL's HMAC for every text length it takes, across every padding boundary", () => {
    const raw = randomBytes(32)
    const key = createSecretKey(raw)
    for (let length = 0; length <= MAX_TEXT_LENGTH; length++) {
      const text = 'x'.repeat(length)
      expect(keyedSha256(key, text).toString('hex'), `length ${length}`).toBe(openSsl(raw, text))
    }
  })

  it("equals OpenSSL's HMAC for texts of 2-, 3- and 4-byte characters and lone surrogates", () => {
    const raw = randomBytes(32)
    const key = createSecretKey(raw)
    const pieces = ['é', '€', '😀', '\ud800', '\udfff', 'a', '|']
    for (let round = 0; round < 500; round++) {
      let text = ''
      while (text.length < MAX_TEXT_LENGTH - 2 && Math.random() < 0.97) text += pieces[Math.floor(Math.random() * pieces.length)]
      expect(keyedSha256(key, text).toString('hex'), JSON.stringify(text)).toBe(openSsl(raw, text))
    }
  })

  it('keeps the keys apart: each key its own midstates, also when used in turn', () => {
    const raws = [randomBytes(16), randomBytes(32), randomBytes(64), randomBytes(65)]
    const keys = raws.map((raw) => createSecretKey(raw))
    for (let round = 0; round < 3; round++) {
      raws.forEach((raw, index) => expect(keyedSha256(keys[index]!, `round ${round}`).toString('hex')).toBe(openSsl(raw, `round ${round}`)))
    }
  })

  it('refuses a text longer than it takes, which hmacSha256 leaves to OpenSSL', () => {
    const raw = randomBytes(32)
    const long = 'y'.repeat(MAX_TEXT_LENGTH + 1)
    expect(() => keyedSha256(createSecretKey(raw), long)).toThrow(RangeError)
    expect(hmacSha256(createSecretKey(raw), long).toString('hex')).toBe(openSsl(raw, long))
  })

  it('gives the same answer for a raw Buffer key, which goes to OpenSSL, as for its KeyObject', () => {
    const raw = randomBytes(32)
    expect(hmacSha256(raw, 'short').toString('hex')).toBe(openSsl(raw, 'short'))
    expect(hmacSha256(createSecretKey(raw), 'short').toString('hex')).toBe(openSsl(raw, 'short'))
  })

  it('answers a fresh Buffer each time, which a caller may keep or change', () => {
    const key = createSecretKey(randomBytes(32))
    const first = keyedSha256(key, 'same')
    const second = keyedSha256(key, 'same')
    const copy = Buffer.from(second)
    first.fill(0)
    expect(second.equals(copy)).toBe(true)
    expect(keyedSha256(key, 'other').equals(copy)).toBe(false)
    expect(second.equals(copy)).toBe(true)
  })
})
