/**
 * Which language a list of wishes gets, without the DOM: the SDK asks it with the page's and the
 * browser's wishes (language.ts), the service with a visitor's Accept-Language for the gate's page
 * (src/routes/gate/gate-strings.ts), so both speak the same language to the same visitor.
 */

/**
 * The languages the SDK speaks, and the gate's page with it: English is built in, the others are
 * fetched from the service (`/sdk/v1/strings/{language}.json`, written from sdk/src/translations/
 * by the build).
 */
export const LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'pl', 'sv', 'ja', 'zh', 'ko', 'tr', 'ru', 'uk', 'cs', 'ar', 'he', 'fa'] as const

export type Language = (typeof LANGUAGES)[number]

/**
 * The direction `language`'s text is written in: right to left for Arabic, Hebrew and Persian,
 * left to right for every other language the SDK speaks. The SDK sets it on the texts it writes
 * (strings.ts), the gate's page on its `<html>` (src/routes/gate/gate-page.ts).
 */
export function directionOf(language: Language): 'rtl' | 'ltr' {
  return /^(ar|he|fa)$/.test(language) ? 'rtl' : 'ltr'
}

/**
 * The first of `wishes` (BCP 47 tags, best first) that the SDK speaks, by its base language
 * (`pt-BR` is `pt`, `zh-Hans-CN` is `zh`, as are Mandarin's `cmn` and Cantonese's `yue`); English
 * when none is. A wish it cannot speak (`fi`, `auto`, an empty `lang`) passes to the next one.
 * Chinese in Traditional script (`zh-Hant`, `zh-TW`, `cmn-HK`, and Cantonese unless it names
 * `Hans`: it is written in Traditional characters) is not answered with the Simplified
 * translation, and neither is a bare `zh` or `cmn` after a Traditional wish: Chrome in Taiwan
 * asks for `zh-TW, zh, en-US, en`, where `zh` stands for the same visitor's Chinese. A Chinese
 * wish naming a Simplified script or region (`zh-Hans`, `zh-CN`, `cmn-SG`) is Simplified
 * whatever came before it: the visitor said so.
 */
export function chooseLanguage(wishes: readonly (string | null | undefined)[]): Language {
  let isTraditionalWished = false
  for (const wish of wishes) {
    // Mandarin is Chinese, and Cantonese is Chinese in Traditional characters unless it names the Simplified script.
    const tag = (wish ?? '').trim().toLowerCase().replace(/_/g, '-').replace(/^cmn\b/, 'zh').replace(/^yue\b/, 'zh-hant')
    const base = tag.split('-')[0] ?? ''
    // Traditional by its script, or its region when it names no Simplified script (`zh-Hans-HK` is Simplified).
    if (base === 'zh' && !/-hans\b/.test(tag) && /-(hant|tw|hk|mo)\b/.test(tag)) {
      isTraditionalWished = true
      continue
    }
    if (tag === 'zh' && isTraditionalWished) continue
    if ((LANGUAGES as readonly string[]).includes(base)) return base as Language
  }
  return 'en'
}
