import type { TollgateErrorCode } from './errors.js'
import { directionOf, type Language } from './language.js'
import type { TollgateStatus } from './types.js'

/**
 * Every visible text the SDK writes. It speaks the visitor's language by itself (language.ts,
 * translations fetched from the service); sites set their own texts by calling
 * `Tollgate.setStrings({...})` or by a `<script type="application/json" data-tollgate-strings>` block on the page.
 */
export interface TollgateStrings {
  solving: string
  verifying: string
  verified: string
  failed: string
  blocked: string
  unreachable: string
  /** The service answered but cannot verify for a moment (503, 502, 504: its storage or gateway). */
  unavailable: string
  rateLimited: string
  unsupported: string
  timeout: string
  /** The site key is missing, unknown, or not allowed on this page's domain: trying again cannot help. */
  misconfigured: string
  /**
   * Follows the sentence of a turned-away visitor (blocked, or the step-ups ran out); `{reference}` is the error's reference.
   * Optional, as every string added later will be: a page's full set of strings written before it still compiles.
   */
  reference?: string
  /** Replaces `solving` after SLOW_SOLVE_MS of solving (declarative.ts): a slow device is still at work. Optional, as `reference`. */
  slow?: string
  /** The status of a vendor's widget (compat.js) whose token expired and was not renewed by itself (Turnstile's `refresh-expired: 'manual'` or `'never'`). Optional, as `reference`. */
  expired?: string
  /** The button of a vendor's checkbox-like widget that starts a new run, after an expiry or a failure. Optional, as `reference`. */
  refresh?: string
}

/** The built-in texts, which every other language (sdk/src/translations/) translates key by key. */
export const english: Required<TollgateStrings> = {
  solving: 'Checking your browser\u2026',
  verifying: 'Verifying\u2026',
  verified: 'Verified.',
  failed: 'Verification failed. Please try again.',
  blocked: 'This request was blocked. If you think this is a mistake, please contact the site owner.',
  unreachable: 'The verification service cannot be reached. Check your connection and try again.',
  unavailable: 'The verification service is unavailable for a moment. Please try again shortly.',
  rateLimited: 'Too many attempts. Please wait a moment and try again.',
  unsupported: 'The verification could not start in this browser. If this keeps happening, please tell the site owner.',
  timeout: 'Verification took too long. Please try again.',
  misconfigured: 'This form cannot be verified here: it is not set up for this site. Please tell the site owner.',
  reference: 'Reference: {reference}',
  slow: 'Still checking \u2014 this can take up to a minute on some devices.',
  expired: 'Verification expired.',
  refresh: 'Verify again',
}

/**
 * The site's own texts (setStrings, data-tollgate-strings): they win over the built-in ones key by
 * key, whichever arrives first (a translation fetched after the page set its texts changes none of them).
 */
let site: Partial<TollgateStrings> = {}
/** The built-in translations fetched from the service, by language. */
const translations: Partial<Record<Language, Partial<TollgateStrings>>> = {}
/**
 * Each language's fetch in flight or done, settled once it is over or TRANSLATION_WAIT_MS after it
 * began, whichever comes first. A failed one is dropped, so that a later loadStrings tries again.
 */
const arrivals: Partial<Record<Language, Promise<void>>> = {}
/** The languages no text waits for any more: fetched, failed, or waited for once already. */
const settled = new Set<Language>(['en'])

/**
 * How long a first text waits for its language: long enough for a slow connection to fetch a
 * kilobyte (so that a visitor never sees English flash before their own language), short enough
 * that a service which does not answer costs a moment of silence at most, then English.
 */
const TRANSLATION_WAIT_MS = 1_500

/** The known keys of `strings` that hold text; anything else is dropped. */
function textsOf(strings: unknown): Partial<TollgateStrings> {
  const record = Object(strings) as Partial<TollgateStrings>
  const texts: Partial<TollgateStrings> = {}
  for (const key of Object.keys(english) as (keyof TollgateStrings)[]) {
    const value = record[key]
    if (typeof value === 'string' && value !== '') texts[key] = value
  }
  return texts
}

export function setStrings(strings: Partial<TollgateStrings>): void {
  site = { ...site, ...textsOf(strings) }
}

/** The texts in `language`: the site's own, over the built-in translation when it came, over English. */
export function getStrings(language: Language = 'en'): Required<TollgateStrings> {
  return { ...english, ...translations[language], ...site }
}

/**
 * Fetches `language`'s texts from the SDK's folder on the service (`folder`, undefined when the
 * page named no service yet), once it succeeds. A failure leaves English, with a warning in the
 * console, and is tried again by the next call (a form's next focus, a widget's next render)
 * without a text waiting for it again: a verification never waits for its texts nor fails for them.
 */
export function loadStrings(language: Language, folder: string | undefined): void {
  if (language === 'en' || translations[language] !== undefined || arrivals[language] !== undefined || folder === undefined) return
  // Inside a promise from the start: a page that wraps fetch and throws breaks neither the SDK's
  // start-up nor the verification that asked for its texts.
  const fetched = Promise.resolve()
    .then(() => fetch(`${folder}strings/${language}.json`))
    // A 404 (a service of an older release, an assetsUrl folder copied without strings/) is a failure, not an empty translation.
    .then((response) => (response.ok ? response.json() : Promise.reject(new Error(String(response.status)))))
    .then(
      (texts: unknown) => void (translations[language] = textsOf(texts)),
      (error: unknown) => {
        delete arrivals[language]
        console.warn(`Tollgate: no ${language} texts (${String(error)})`)
      },
    )
  arrivals[language] = Promise.race([fetched, new Promise((resolve) => setTimeout(resolve, TRANSLATION_WAIT_MS))]).then(() => void settled.add(language))
}

/** The element's latest text asked for, and its text when it was asked for. */
const latestText = new WeakMap<Node, { before: string | null }>()

/**
 * Writes a text in `language` into `element` once that language is there (or was waited for long
 * enough), and sets the element's `lang` to the language the text is in, for screen readers (WCAG
 * 3.1.2): `language`, whether the text is the translation's or the site's own (setStrings, written
 * for the page it is on), English only when the English text is what is shown (the translation did
 * not come, or the SDK does not speak the page's language). Its `dir` follows that language (directionOf):
 * an English sentence on a right-to-left page keeps its punctuation at its end, an Arabic one on a
 * left-to-right page reads from the right. The latest text asked for wins over
 * one still waiting; a text that waited is not written over one the page wrote meanwhile (a
 * tollgate:error or tollgate:verified listener that shows its own words).
 */
export function writeText(element: HTMLElement, language: Language, text: (strings: Required<TollgateStrings>) => string): void {
  const mark = { before: element.textContent }
  latestText.set(element, mark)
  const write = () => {
    if (latestText.get(element) !== mark || element.textContent !== mark.before) return
    const written = text(getStrings(language))
    element.textContent = written
    if (written === '') return
    element.lang = written === text(english) ? 'en' : language
    element.dir = directionOf(element.lang as Language)
  }
  const arrival = arrivals[language]
  if (arrival === undefined || settled.has(language)) write()
  else void arrival.then(write)
}

/** The sentence of a status: solving, verifying and verified have one; idle and error none. */
export function statusText(status: TollgateStatus): (strings: Required<TollgateStrings>) => string {
  return (strings) => (strings as Partial<Record<TollgateStatus, string>>)[status] ?? ''
}

/** Which sentence tells of which failure; any other is `failed`. */
const sentenceOf: Partial<Record<TollgateErrorCode, keyof TollgateStrings>> = {
  blocked: 'blocked',
  network_error: 'unreachable',
  server_error: 'unavailable',
  rate_limited: 'rateLimited',
  worker_unavailable: 'unsupported',
  timeout: 'timeout',
  // No site key (or bad options in the page's code): the site's mistake, like an unknown key.
  invalid_options: 'misconfigured',
  invalid_site_key: 'misconfigured',
  origin_not_allowed: 'misconfigured',
}

/**
 * The visible sentence for a failure, followed by its reference when it has one (TollgateError.reference):
 * after a space, or none after a full-width full stop (Japanese, Chinese). The reference is isolated
 * (U+2068 FIRST STRONG ISOLATE to U+2069 POP DIRECTIONAL ISOLATE) so that it reads as one piece, left
 * to right, inside a right-to-left sentence.
 */
export function messageFor(code: TollgateErrorCode, reference?: string, strings = getStrings()): string {
  const sentence = strings[sentenceOf[code] ?? 'failed']
  return reference === undefined ? sentence : `${sentence}${/。$/.test(sentence) ? '' : ' '}${strings.reference.replace('{reference}', `\u2068${reference}\u2069`)}`
}
