import { chooseLanguage, LANGUAGES, type Language } from '../../../sdk/src/choose-language.js'
import { translations } from '../../../sdk/src/translations/index.js'
import { parseWeightedList } from '../../http/weighted-list.js'
import { gateTranslations } from './gate-translations.js'

/**
 * What the gate's page says, in the languages the SDK speaks (gate-translations.ts). The page is
 * rendered in the visitor's language (Accept-Language), and its script reads the rest of its texts
 * from the page, so a visitor never sees the page switch languages half-way.
 */
export interface GateStrings {
  /** The page's title and first heading while the browser is checked. */
  title: string
  checking: string
  noscript: string
  passedTitle: string
  passed: string
  deniedTitle: string
  denied: string
  rateLimitedTitle: string
  rateLimited: string
  failedTitle: string
  /** `{code}` is replaced by the error's code. */
  failed: string
  loopTitle: string
  loop: string
  cookiesTitle: string
  cookies: string
  /** The button under an error that loads the page again (every error but `denied`). */
  retry: string
  /**
   * Revealed by the page's CSS alone when nothing happened for a while (gate.js blocked or lost on
   * the way): a short question, followed by `reloadLink`, a link to the same address.
   */
  stillWaiting: string
  reloadLink: string
  /**
   * The link under `denied` to the site's help for blocked visitors (its blockedHelpUrl, with the
   * reference), when the site has one.
   */
  contactOwner: string
  /**
   * Under `denied`: `{reference}` is the verification's reference, which finds it in the site's log.
   * The SDK's own sentence (sdk/src/translations/), so that the page and the forms quote it alike.
   */
  reference: string
}

/** The page's own texts: all but the reference's sentence, which is the SDK's. */
export type GatePageTexts = Omit<GateStrings, 'reference'>

const english: GatePageTexts = {
  title: 'Just a moment',
  checking: 'Checking that you are a person. This takes a second or two and needs nothing from you.',
  noscript: 'This site needs JavaScript to let you in: turn it on and load the page again.',
  passedTitle: 'Thank you',
  passed: 'Taking you to the page…',
  deniedTitle: 'Access denied',
  denied: "This site's protection turned this browser away. If you are a person, try another browser or network, or tell the site's owner.",
  rateLimitedTitle: 'Too many checks',
  rateLimited: 'Your network asked to be checked too often. Wait a minute, then load the page again.',
  failedTitle: 'Something went wrong',
  failed: 'Your browser could not be checked ({code}). Load the page again to retry.',
  loopTitle: 'Your browser keeps coming back',
  loop: 'It was checked, but the site does not see its pass: allow cookies for this site, or use a network whose address stays the same, then load the page again.',
  cookiesTitle: 'Cookies are blocked',
  cookies: 'This site lets browsers in with a cookie: allow cookies for this site, then load the page again.',
  retry: 'Try again',
  stillWaiting: 'Still waiting?',
  reloadLink: 'Load the page again',
  contactOwner: "Contact the site's owner",
}

const pageTexts: Record<Language, GatePageTexts> = { en: english, ...gateTranslations }

/**
 * The page in each language the SDK speaks, so that a visitor reads the gate and a protected form
 * alike: the reference's sentence is taken from the SDK's translations (server-side only: the
 * SDK's bundles never import this file), so the two cannot drift apart.
 */
export const gateStrings = Object.fromEntries(
  LANGUAGES.map((language) => [language, { ...pageTexts[language], reference: translations[language].reference }]),
) as Record<Language, GateStrings>

/** The page's texts in a language negotiateLanguage chose. */
export function gateStringsIn(language: string): GateStrings {
  return Object.hasOwn(gateStrings, language) ? gateStrings[language as Language] : gateStrings.en
}

/**
 * The language of the visitor's Accept-Language that the page speaks: its ranges by preference
 * (q, then their order; q=0 refuses one, an unreadable q skips one: parseWeightedList), chosen as
 * the SDK chooses from a browser's languages (chooseLanguage: `pt-BR` is `pt`, Traditional Chinese
 * is not answered in Simplified, nor a bare `zh` after it), so that the gate and the forms behind
 * it speak the same language. English when none.
 */
export function negotiateLanguage(acceptLanguage: string | undefined): Language {
  // A browser sends a handful of ranges; more than 32 is no browser's header.
  const ranges = parseWeightedList(acceptLanguage, 32)
    .filter((range) => range.q > 0)
    .sort((first, second) => second.q - first.q || first.index - second.index)
  return chooseLanguage(ranges.map((range) => range.value))
}
