import { describe, expect, it } from 'vitest'
import { LANGUAGES } from '../../../sdk/src/choose-language.js'
import { translations } from '../../../sdk/src/translations/index.js'
import { gateStrings, gateStringsIn, negotiateLanguage, type GateStrings } from '../../../src/routes/gate/gate-strings.js'
import { gateTranslations } from '../../../src/routes/gate/gate-translations.js'

describe("the gate page's languages", () => {
  it('picks the first language the page speaks by the visitor\'s preference, English otherwise', () => {
    expect(negotiateLanguage(undefined)).toBe('en')
    expect(negotiateLanguage('')).toBe('en')
    expect(negotiateLanguage('de-DE,de;q=0.9,en;q=0.8')).toBe('de')
    expect(negotiateLanguage('fi, fr-CA;q=0.7, de;q=0.8')).toBe('de')
    expect(negotiateLanguage('pt-BR')).toBe('pt')
    expect(negotiateLanguage('ES')).toBe('es')
    expect(negotiateLanguage('nl;q=0, it')).toBe('it')
    expect(negotiateLanguage('*')).toBe('en')
    expect(negotiateLanguage('xx, zz;q=0.5')).toBe('en')
    expect(negotiateLanguage(`${'xx,'.repeat(10_000)}fr`)).toBe('en')
    expect(gateStringsIn('constructor')).toBe(gateStrings.en)
    expect(negotiateLanguage('constructor, __proto__')).toBe('en')
  })

  it('reads the weights as RFC 9110 writes them: `q` in any case, spaces around `=`, from 0 to 1, an unreadable one skipping its range', () => {
    const chosen: [acceptLanguage: string, language: string][] = [
      ['de;Q=0, fr', 'fr'],
      ['de;q = 0, fr', 'fr'],
      ['de ; q=0 , fr', 'fr'],
      // A weight that is not one is no reason to rank a range first.
      ['de;q=abc, fr;q=0.5', 'fr'],
      ['de;q=abc, fr', 'fr'],
      ['fr;q=0.5, de;q=1.999', 'fr'],
      ['fr;q=0.5, de;q=2', 'fr'],
      ['fr;q=0.5, de;q=0.0001', 'fr'],
      ['fr;q=0.5, de;Q=0.6', 'de'],
      ['fr;q=0.5, de;q=1.000', 'de'],
    ]
    for (const [acceptLanguage, language] of chosen) expect(negotiateLanguage(acceptLanguage), acceptLanguage).toBe(language)
  })

  it('chooses among the languages as the SDK does: a region falls back to its language, Traditional Chinese is never Simplified', () => {
    const chosen: [acceptLanguage: string, language: string][] = [
      ['sv-SE,sv;q=0.9', 'sv'],
      ['uk-UA, ru;q=0.5', 'uk'],
      ['zh-CN,zh;q=0.9,en;q=0.8', 'zh'],
      ['zh-Hans-HK', 'zh'],
      // Chrome in Taiwan: the bare zh is the same visitor's Traditional Chinese, so English decides.
      ['zh-TW,zh;q=0.9,en-US;q=0.8,en;q=0.7', 'en'],
      ['zh-Hant, ja;q=0.5', 'ja'],
      ['zh-HK,zh-CN;q=0.5', 'zh'],
      // By q before order: the Traditional wish is the first one, whatever its place in the header.
      ['zh;q=0.8, zh-TW, ko;q=0.5', 'ko'],
      // A refused Traditional wish (q=0) is no wish: the zh after it is Simplified.
      ['zh-TW;q=0, zh', 'zh'],
      // Cantonese and Mandarin are Chinese too: Traditional in Taiwan, Hong Kong and Macao, and Cantonese unless it names the Simplified script.
      ['yue-HK, zh;q=0.9', 'en'],
      ['yue, zh;q=0.9, ja;q=0.8', 'ja'],
      ['cmn-Hant-TW, zh', 'en'],
      ['cmn-TW, zh, ko', 'ko'],
      ['cmn-Hans-CN, en', 'zh'],
      ['cmn-CN, en', 'zh'],
      ['cmn, en', 'zh'],
      ['yue-Hans, en', 'zh'],
    ]
    for (const [acceptLanguage, language] of chosen) expect(negotiateLanguage(acceptLanguage), acceptLanguage).toBe(language)
  })

  it('says everything in every language, with the error code in its failure text', () => {
    const keys = Object.keys(gateStrings.en ?? {}).sort()
    for (const [language, strings] of Object.entries(gateStrings)) {
      expect(Object.keys(strings).sort(), language).toEqual(keys)
      for (const [key, text] of Object.entries(strings) as [string, string][]) expect(text.trim(), `${language}.${key}`).not.toBe('')
      // The placeholders kept; the parentheses around {code} are full-width in Japanese and Chinese.
      expect(strings.failed, language).toMatch(/[(（]\{code\}[)）]/)
      expect(strings.reference, language).toContain('{reference}')
      expect(Object.values(strings).join(''), language).not.toMatch(/[<>]/)
      // A text left in English is a text not translated (the page's sentences differ in every language).
      if (language !== 'en') for (const key of keys.filter((key) => key !== 'reference')) expect(strings[key as keyof GateStrings], `${language}.${key}`).not.toBe(gateStrings.en[key as keyof GateStrings])
    }
  })

  it("quotes a turned-away visitor's reference in the SDK's own words, which it keeps no copy of", () => {
    for (const language of LANGUAGES) expect(gateStrings[language].reference, language).toBe(translations[language].reference)
    // Taken from sdk/src/translations/ rather than written again, so the page and the forms cannot drift apart.
    for (const [language, strings] of Object.entries(gateTranslations)) expect(Object.hasOwn(strings, 'reference'), language).toBe(false)
  })

  it("writes French with a non-breaking space before its colons, as the SDK's French does", () => {
    const french = Object.values(gateStrings.fr).join('\n')
    expect(french).toContain('\u00a0:')
    expect(french).not.toMatch(/[^\u00a0][:;!?]/u)
  })
})
