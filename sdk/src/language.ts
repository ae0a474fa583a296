import { chooseLanguage, type Language } from './choose-language.js'

export { chooseLanguage, directionOf, LANGUAGES, type Language } from './choose-language.js'

let pageChoices: readonly (string | null | undefined)[] = []

/**
 * The script tag's choices, best first (`data-lang`, then the `hl` of the vendors' script URLs),
 * which an element's own choice overrides. An empty or unknown one passes to the next.
 */
export function setPageLanguage(...choices: (string | null | undefined)[]): void {
  pageChoices = choices
}

/**
 * The `lang` of the closest element that has one, out through the shadow roots `element` is inside of.
 * Through the prototypes: a form's control named `closest` or `getRootNode` shadows the form's own (DOM clobbering).
 */
function closestLang(element: Element): string | null | undefined {
  const root = Node.prototype.getRootNode.call(element)
  const marked = Element.prototype.closest.call(element, '[lang]')
  return marked === null ? (root instanceof ShadowRoot ? closestLang(root.host) : undefined) : Element.prototype.getAttribute.call(marked, 'lang')
}

/**
 * The language of the texts shown in `element`. The site's explicit choices come first (a form's
 * or widget's own, then the page script's bindForms, then the script tag's; `auto` is none). Then the language the page says its
 * text is in (the closest `lang` attribute, through shadow roots, then the document's `<html lang>`): the status line sits
 * among that text, and a visitor reading a French page reads French, whatever language their
 * browser was set up in. Last the browser's own preferences, in their order, for pages that do
 * not say (or say a language the SDK does not speak).
 */
export function languageFor(element: Element, ...explicit: (string | undefined)[]): Language {
  // Old webviews lack navigator.languages, and some privacy settings leave it empty.
  const listed = navigator.languages as readonly string[] | undefined
  const browser = listed !== undefined && listed.length > 0 ? listed : [navigator.language]
  return chooseLanguage([...explicit, ...pageChoices, closestLang(element), document.documentElement.lang, ...browser])
}
