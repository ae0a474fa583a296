import { describe, expect, it } from 'vitest'
import { findDisplayNameProblem, normalizeDisplayName } from '../../src/domain/display-name.js'

const composed = 'Caf\u00E9 M\u00FCller'
const decomposed = 'Cafe\u0301 Mu\u0308ller'

describe('the name of a site, an API key or a passkey as stored', () => {
  it('is one name whether its accented letters were typed composed or decomposed', () => {
    expect(decomposed).not.toBe(composed)
    expect(normalizeDisplayName(decomposed)).toBe(composed)
    expect(normalizeDisplayName(composed)).toBe(composed)
    // Hangul typed as jamo (as some keyboards send it) is the syllables.
    expect(normalizeDisplayName('\u1112\u1161\u11AB\u1100\u1173\u11AF')).toBe('\uD55C\uAE00')
  })

  it('loses the white space around it, not that within it', () => {
    expect(normalizeDisplayName(`  ${decomposed}\t\n`)).toBe(composed)
    expect(normalizeDisplayName('\u3000Shop  two\u00A0')).toBe('Shop  two')
  })

  it('keeps compatibility forms, which are other text: full-width letters, ligatures, superscripts', () => {
    expect(normalizeDisplayName('\uFF33\uFF28\uFF2F\uFF30')).toBe('\uFF33\uFF28\uFF2F\uFF30')
    expect(normalizeDisplayName('\uFB01le m\u00B2')).toBe('\uFB01le m\u00B2')
  })

  it('is counted for its length once composed, so a decomposed name within the limit composed passes', () => {
    const name = 'e\u0301'.repeat(10)
    expect([...name]).toHaveLength(20)
    expect(findDisplayNameProblem(name, 10)).toBe('must be at most 10 characters')
    expect(findDisplayNameProblem(normalizeDisplayName(name), 10)).toBeUndefined()
  })

  it('is refused as before when nothing visible is left', () => {
    expect(findDisplayNameProblem(normalizeDisplayName(' \u200B '), 100)).toBe('must contain a visible character')
    expect(findDisplayNameProblem(normalizeDisplayName('   '), 100)).toBe('must not be empty')
  })
})
