/**
 * The languages the SDK speaks: English is built in, the others are fetched from the service
 * (`/sdk/v1/strings/{language}.json`, written from sdk/src/translations/ by the build).
 */
export const LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'pl', 'sv', 'ja', 'zh', 'ko', 'tr', 'ru', 'uk', 'cs'] as const

export type Language = (typeof LANGUAGES)[number]

/**
 * The first of `wishes` (BCP 47 tags, best first) that the SDK speaks, by its base language
 * (`pt-BR` is `pt`, `zh-Hans-CN` is `zh`); English when none is. A wish it cannot speak (`fi`,
 * `auto`, an empty `lang`) passes to the next one. Chinese in Traditional script (`zh-Hant`,
 * `zh-TW`, `zh-HK`, `zh-MO`) is not taken as the Simplified translation: the next wish decides.
 */
export function chooseLanguage(wishes: readonly (string | null | undefined)[]): Language {
  for (const wish of wishes) {
    const tag = (wish ?? '').toLowerCase()
    const base = tag.split(/[-_]/)[0] ?? ''
    if ((LANGUAGES as readonly string[]).includes(base) && !/^zh[-_](.+[-_])?(hant|tw|hk|mo)\b/.test(tag)) return base as Language
  }
  return 'en'
}

let pageChoice: string | undefined

/** The script tag's choice (`data-lang`, or the `hl` of the vendors' script URLs), which an element's own choice overrides. */
export function setPageLanguage(choice: string | undefined): void {
  pageChoice = choice
}

/**
 * The language of the texts shown in `element`. The site's explicit choices come first (a form's
 * or widget's own, then the page script's bindForms, then the script tag's; `auto` is none). Then the language the page says its
 * text is in (the closest `lang` attribute, the document's `<html lang>`): the status line sits
 * among that text, and a visitor reading a French page reads French, whatever language their
 * browser was set up in. Last the browser's own preferences, in their order, for pages that do
 * not say (or say a language the SDK does not speak).
 */
export function languageFor(element: Element, ...explicit: (string | undefined)[]): Language {
  // Old webviews lack navigator.languages.
  const browser = (navigator.languages as readonly string[] | undefined) ?? [navigator.language]
  return chooseLanguage([...explicit, pageChoice, element.closest('[lang]')?.getAttribute('lang'), document.documentElement.lang, ...browser])
}
