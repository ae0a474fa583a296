import { describe, expect, it } from 'vitest'
import { findUnstorableText } from '../../src/domain/storable-text.js'

describe('text PostgreSQL cannot store', () => {
  it('is a NUL character or half of a surrogate pair, anywhere in a value, keys included', () => {
    // Named as validation errors name fields: the body's own paths bare, with dotted indexes.
    expect(findUnstorableText({ name: 'a\u0000b' }, '')).toBe('name')
    expect(findUnstorableText({ settings: { webhookUrl: 'https://example.com/\uD800' } }, '')).toBe('settings.webhookUrl')
    expect(findUnstorableText({ domains: ['ok.example', 'x\uDC00'] }, '')).toBe('domains.1')
    expect(findUnstorableText({ 'k\u0000': 1 }, '')).toBe('')
    expect(findUnstorableText({ settings: { 'k\u0000': 1 } }, '')).toBe('settings')
    expect(findUnstorableText('\uDBFF', 'querystring.from')).toBe('querystring.from')
  })

  it('is not whole surrogate pairs, other control characters, non-strings or nothing', () => {
    expect(findUnstorableText({ name: 'emoji 😀 and 𝄞', note: 'tab\tnewline\n\u0001', count: 3, on: true, none: null }, 'body')).toBeUndefined()
    expect(findUnstorableText(undefined, 'body')).toBeUndefined()
    expect(findUnstorableText([], 'body')).toBeUndefined()
  })

  it('is found at any depth (a body nested 8,000 levels deep fits in 16 KiB), the first in order', () => {
    let deep: unknown = ['x\u0000']
    for (let level = 0; level < 8_000; level++) deep = [deep]
    expect(findUnstorableText(deep, '')).toBe(`${'0.'.repeat(8_000)}0`)
    expect(findUnstorableText({ a: ['ok', { b: 'bad\u0000' }], c: 'bad\u0000' }, '')).toBe('a.1.b')
  })
})
