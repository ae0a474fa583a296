import { describe, expect, it } from 'vitest'
import { chooseLanguage, directionOf, LANGUAGES } from '../../sdk/src/language.js'

/*
 * languageFor (the browser's side) asks chooseLanguage with the wishes in this order: the site's
 * explicit choices (the form's or widget's own, bindForms', the script tag's), the closest `lang`
 * attribute and the document's, then navigator.languages. test/e2e/sdk-languages.test.ts checks
 * that order in Chromium.
 */
describe('the language the SDK speaks', () => {
  it('takes the first wish it speaks, so that an explicit choice wins over the page, and the page over the browser', () => {
    expect(chooseLanguage(['fr', 'de', 'ja'])).toBe('fr')
    // A French page read with an English browser says French.
    expect(chooseLanguage([undefined, 'fr', 'en-US', 'en'])).toBe('fr')
    // A page that does not say its language: the browser's, in its order.
    expect(chooseLanguage([undefined, null, '', 'ko-KR', 'en'])).toBe('ko')
  })

  it('falls back from a region or script to its base language', () => {
    expect(chooseLanguage(['pt-BR'])).toBe('pt')
    expect(chooseLanguage(['de-AT'])).toBe('de')
    expect(chooseLanguage(['zh-CN'])).toBe('zh')
    expect(chooseLanguage(['zh-Hans'])).toBe('zh')
    expect(chooseLanguage(['zh-Hans-CN'])).toBe('zh')
    expect(chooseLanguage(['en_GB'])).toBe('en')
    expect(chooseLanguage(['SV-se'])).toBe('sv')
    expect(chooseLanguage(['ar-EG'])).toBe('ar')
    expect(chooseLanguage(['he-IL'])).toBe('he')
    expect(chooseLanguage(['fa-IR'])).toBe('fa')
  })

  it('writes Arabic, Hebrew and Persian right to left, every other language it speaks left to right', () => {
    expect(LANGUAGES.filter((language) => directionOf(language) === 'rtl')).toEqual(['ar', 'he', 'fa'])
  })

  it('does not answer Traditional Chinese with the Simplified translation: the next wish decides', () => {
    for (const tag of ['zh-TW', 'zh-Hant', 'zh-Hant-TW', 'zh-HK', 'zh-MO']) {
      expect(chooseLanguage([tag, 'en']), tag).toBe('en')
      expect(chooseLanguage([tag, 'ja']), tag).toBe('ja')
    }
  })

  it('reads the script subtag first: Simplified script in a Traditional region is Simplified', () => {
    expect(chooseLanguage(['zh-Hans-HK'])).toBe('zh')
    expect(chooseLanguage(['zh-Hans-TW', 'en'])).toBe('zh')
    expect(chooseLanguage(['zh-Hant-CN', 'en'])).toBe('en')
  })

  it('takes a bare zh after a Traditional wish as the same Traditional Chinese (Chrome in Taiwan)', () => {
    expect(chooseLanguage(['zh-TW', 'zh', 'en-US', 'en'])).toBe('en')
    expect(chooseLanguage(['zh-TW', 'zh', 'en'])).toBe('en')
    expect(chooseLanguage(['zh-HK', 'zh', 'ja'])).toBe('ja')
    // A bare zh before any Traditional wish is Simplified's, as its tag says.
    expect(chooseLanguage(['zh', 'zh-TW'])).toBe('zh')
    // A wish that names a Simplified region or script is Simplified, whatever came before it: the visitor said so.
    expect(chooseLanguage(['zh-Hant', 'zh-CN'])).toBe('zh')
    expect(chooseLanguage(['zh-TW', 'zh-Hans', 'en'])).toBe('zh')
  })

  it('reads Mandarin (cmn) and Cantonese (yue) as Chinese, Traditional by their script or region, Cantonese unless it names Simplified', () => {
    // Simplified: as zh-CN and zh-Hans are.
    for (const tag of ['cmn', 'cmn-CN', 'cmn-Hans', 'cmn-Hans-CN', 'cmn-Hans-TW', 'CMN_cn', 'yue-Hans', 'yue-Hans-CN']) expect(chooseLanguage([tag, 'en']), tag).toBe('zh')
    // Traditional: the next wish decides, and a bare zh after it is the same Traditional Chinese.
    for (const tag of ['cmn-TW', 'cmn-Hant', 'cmn-Hant-TW', 'cmn-HK', 'yue', 'yue-HK', 'yue-Hant', 'yue-Hant-HK', 'yue-MO', 'YUE_hk']) {
      expect(chooseLanguage([tag, 'ja']), tag).toBe('ja')
      expect(chooseLanguage([tag, 'zh', 'en']), tag).toBe('en')
    }
    expect(chooseLanguage(['yue-HK', 'zh-CN', 'en'])).toBe('zh')
    // A bare cmn after a Traditional wish is that visitor's Mandarin, as a bare zh is.
    expect(chooseLanguage(['zh-TW', 'cmn', 'en'])).toBe('en')
    // Other languages that begin alike are not Chinese.
    expect(chooseLanguage(['yues', 'cmnx-TW', 'zha', 'en'])).toBe('en')
  })

  it('reads a lang attribute with spaces around it', () => {
    expect(chooseLanguage([' de ', 'en'])).toBe('de')
  })

  it('passes over what it does not speak, `auto` included, and speaks English when nothing is left', () => {
    expect(chooseLanguage(['auto', 'fi', 'uk'])).toBe('uk')
    expect(chooseLanguage(['fi', 'x-klingon', 'ptx', 'e'])).toBe('en')
    expect(chooseLanguage([])).toBe('en')
  })
})
