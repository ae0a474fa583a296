import { describe, expect, it } from 'vitest'
import { gateStrings, gateStringsIn, negotiateLanguage } from '../../../src/routes/gate/gate-strings.js'

describe("the gate page's languages", () => {
  it('picks the first language the page speaks by the visitor\'s preference, English otherwise', () => {
    expect(negotiateLanguage(undefined)).toBe('en')
    expect(negotiateLanguage('')).toBe('en')
    expect(negotiateLanguage('de-DE,de;q=0.9,en;q=0.8')).toBe('de')
    expect(negotiateLanguage('ja, fr-CA;q=0.7, de;q=0.8')).toBe('de')
    expect(negotiateLanguage('pt-BR')).toBe('pt')
    expect(negotiateLanguage('ES')).toBe('es')
    expect(negotiateLanguage('nl;q=0, it')).toBe('it')
    expect(negotiateLanguage('*')).toBe('en')
    expect(negotiateLanguage('xx, zz;q=0.5')).toBe('en')
    expect(negotiateLanguage('de;q=abc, fr')).toBe('de')
    expect(negotiateLanguage(`${'xx,'.repeat(10_000)}fr`)).toBe('en')
    expect(gateStringsIn('constructor')).toBe(gateStrings.en)
    expect(negotiateLanguage('constructor, __proto__')).toBe('en')
  })

  it('says everything in every language, with the error code in its failure text', () => {
    const keys = Object.keys(gateStrings.en ?? {}).sort()
    for (const [language, strings] of Object.entries(gateStrings)) {
      expect(Object.keys(strings).sort(), language).toEqual(keys)
      for (const [key, text] of Object.entries(strings) as [string, string][]) expect(text.trim(), `${language}.${key}`).not.toBe('')
      expect(strings.failed, language).toContain('({code})')
      expect(Object.values(strings).join(''), language).not.toMatch(/[<>]/)
    }
  })
})
