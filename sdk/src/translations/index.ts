/**
 * The SDK's texts in every language it speaks. Never bundled into the browser builds: the build
 * writes each language as `strings/{language}.json` beside the SDK (scripts/build-sdk.ts), and the
 * SDK fetches the one it needs (strings.ts, loadStrings). The type makes every language translate
 * every key, and lists exactly the languages of language.ts.
 */
import type { Language } from '../language.js'
import { english, type TollgateStrings } from '../strings.js'
import { ar } from './ar.js'
import { cs } from './cs.js'
import { de } from './de.js'
import { es } from './es.js'
import { fa } from './fa.js'
import { fr } from './fr.js'
import { he } from './he.js'
import { it } from './it.js'
import { ja } from './ja.js'
import { ko } from './ko.js'
import { nl } from './nl.js'
import { pl } from './pl.js'
import { pt } from './pt.js'
import { ru } from './ru.js'
import { sv } from './sv.js'
import { tr } from './tr.js'
import { uk } from './uk.js'
import { zh } from './zh.js'

export const translations: Record<Language, Required<TollgateStrings>> = { en: english, de, fr, es, it, pt, nl, pl, sv, ja, zh, ko, tr, ru, uk, cs, ar, he, fa }
