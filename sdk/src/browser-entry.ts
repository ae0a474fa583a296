/**
 * The script-tag build:
 *   <script src="https://tollgate.example.com/sdk/v1/tollgate.js" data-site-key="..." async defer></script>
 * It sets window.Tollgate, binds every form[data-tollgate], and talks to the service it was
 * loaded from (or to data-api-url). `data-lang` on the tag sets the forms' language (language.ts).
 */
// bindForms and execute come from their own modules: index.ts wraps them for servers, where this build never runs.
import { reset, setStrings, TollgateError, version } from './index.js'
import { bindForms } from './declarative.js'
import { assetsFolderOf, execute, setDefaults } from './execute.js'
import { languageFor, setPageLanguage } from './language.js'
import { loadStrings } from './strings.js'
import { joined, otherCopy } from './page-global.js'

const api = { execute, reset, setStrings, bindForms, TollgateError, version }
const other = otherCopy()

// A page that includes the tag twice (a theme and a plugin, say) keeps the first copy: a second
// one would bind every form again and fetch a second challenge per form. compat.js's
// window.Tollgate, which has no bindForms, gives way to this one, whose reset() and setStrings()
// reach its widgets still.
if (typeof other?.bindForms !== 'function') {
  // The settings come from the first tag in the page, not from the copy that happens to run
  // first (async copies run as they arrive); currentScript, only set while this file first runs,
  // serves a copy saved under another name.
  const first = document.querySelector<HTMLScriptElement>('script[src*="/sdk/v1/tollgate.js"]')
  const script = first ?? (document.currentScript instanceof HTMLScriptElement ? document.currentScript : null)
  const scriptUrl = script !== null && script.src !== '' ? new URL(script.src) : undefined
  const apiUrl = script?.dataset.apiUrl ?? scriptUrl?.origin
  setDefaults({ apiUrl, assetsUrl: scriptUrl === undefined ? undefined : new URL('.', scriptUrl).href })
  // Before bindForms: the forms it prepares fetch their language's texts at once.
  setPageLanguage(script?.dataset.lang)
  // The global's type lives in sdk/tollgate.d.ts for the sites that use it.
  Object.assign(window, { Tollgate: other ? joined(api, other) : api })
  bindForms({ siteKey: script?.dataset.siteKey, fieldName: script?.dataset.responseFieldName, action: script?.dataset.action, cData: script?.dataset.cdata })
  document.dispatchEvent(new CustomEvent('tollgate:ready'))
  // The page's texts are fetched now, beside everything else, so that they are there by the first
  // text shown (a form in another language than the page's fetched its own when bound). Last, so
  // that nothing here can keep the forms unbound or the global unset.
  loadStrings(languageFor(document.documentElement), assetsFolderOf({}))
}
