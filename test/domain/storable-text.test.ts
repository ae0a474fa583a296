import { describe, expect, it } from 'vitest'
import { findUnstorableText } from '../../src/domain/storable-text.js'

describe('text PostgreSQL cannot store', () => {
  it('is a NUL character or half of a surrogate pair, anywhere in a value, keys included', () => {
    expect(findUnstorableText({ name: 'a\u0000b' }, 'body')).toBe('body.name')
    expect(findUnstorableText({ settings: { webhookUrl: 'https://example.com/\uD800' } }, 'body')).toBe('body.settings.webhookUrl')
    expect(findUnstorableText({ domains: ['ok.example', 'x\uDC00'] }, 'body')).toBe('body.domains[1]')
    expect(findUnstorableText({ 'k\u0000': 1 }, 'body')).toBe('body')
    expect(findUnstorableText('\uDBFF', 'querystring.from')).toBe('querystring.from')
  })

  it('is not whole surrogate pairs, other control characters, non-strings or nothing', () => {
    expect(findUnstorableText({ name: 'emoji 😀 and 𝄞', note: 'tab\tnewline\n\u0001', count: 3, on: true, none: null }, 'body')).toBeUndefined()
    expect(findUnstorableText(undefined, 'body')).toBeUndefined()
    expect(findUnstorableText([], 'body')).toBeUndefined()
  })
})
