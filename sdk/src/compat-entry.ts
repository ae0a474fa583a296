/**
 * The vendors' page APIs, for sites moving to Tollgate without rewriting their pages: served as
 * `/sdk/v1/compat.js`, which defines `turnstile`, `grecaptcha` and `hcaptcha`, and at the vendors'
 * own script paths, each defining its vendor's global only:
 *   <script src="https://tollgate.example.com/turnstile/v0/api.js" async defer></script>
 *   <script src="https://tollgate.example.com/recaptcha/api.js?render=explicit&onload=ready"></script>
 *   <script src="https://tollgate.example.com/1/api.js" async defer></script>
 * A vendor's API the page has already (its script, still loaded) is left alone. The
 * script's query string is read as the vendors read theirs: `onload` names a function to call
 * once the API is there, `render=explicit` turns off the implicit rendering of the vendor's
 * elements, hCaptcha's `recaptchacompat=off` drops its second field and its `grecaptcha`. It also sets
 * `window.Tollgate` (tollgate.js's API but bindForms), or joins tollgate.js's when the page has it.
 */
// execute comes from its own module: index.ts wraps it for servers, where this build never runs.
import { reset, setStrings, TollgateError, version } from './index.js'
import { assetsFolderOf, execute, setDefaults } from './execute.js'
import { languageFor, setPageLanguage } from './language.js'
import { loadStrings } from './strings.js'
import { joined, otherCopy } from './page-global.js'
import { createHcaptcha } from './compat/hcaptcha.js'
import { callOnload, isVendorApi, whenParsed, type VendorApi } from './compat/page-api.js'
import { createRecaptcha } from './compat/recaptcha.js'
import { createTurnstile } from './compat/turnstile.js'

type Vendor = 'turnstile' | 'grecaptcha' | 'hcaptcha'

/**
 * Which globals a path defines: its vendor's at a vendor's path (Turnstile's with reCAPTCHA's too
 * when asked for with `compat=recaptcha`, as Turnstile's own script does), all three at compat.js.
 */
function vendorsOf(path: string, query: URLSearchParams): Vendor[] {
  if (path.startsWith('/turnstile/')) return query.get('compat') === 'recaptcha' ? ['turnstile', 'grecaptcha'] : ['turnstile']
  if (path.startsWith('/recaptcha/')) return ['grecaptcha']
  if (path === '/1/api.js') return ['hcaptcha']
  return ['turnstile', 'grecaptcha', 'hcaptcha']
}

const script = document.currentScript instanceof HTMLScriptElement ? document.currentScript : null
const scriptUrl = script !== null && script.src !== '' ? new URL(script.src) : undefined
// The worker and WebAssembly are under /sdk/v1/ of the service, whichever path served this file.
setDefaults({ apiUrl: script?.dataset.apiUrl ?? scriptUrl?.origin })
const query = scriptUrl?.searchParams ?? new URLSearchParams()
// reCAPTCHA's and hCaptcha's scripts take the widgets' language as `hl`; data-lang as on tollgate.js
// (an empty data-lang passes to hl).
setPageLanguage(script?.dataset.lang, query.get('hl'))
const page = window as unknown as Record<string, unknown>
const create: Record<Vendor, () => VendorApi<unknown>> = {
  turnstile: createTurnstile,
  grecaptcha: createRecaptcha,
  hcaptcha: () => createHcaptcha(query.get('recaptchacompat') !== 'off'),
}
const vendors = vendorsOf(scriptUrl?.pathname ?? '', query)
const installed: VendorApi<unknown>[] = []
for (const vendor of vendors) {
  if (isVendorApi(page[vendor])) continue
  const vendorApi = create[vendor]()
  page[vendor] = vendorApi.api
  installed.push(vendorApi)
}
// hCaptcha's script answers to reCAPTCHA's name as well, unless told not to.
if (!vendors.includes('grecaptcha') && vendors.includes('hcaptcha') && query.get('recaptchacompat') !== 'off' && !isVendorApi(page.grecaptcha)) {
  page.grecaptcha = page.hcaptcha
}
// Without bindForms: a page of the vendors' markup has no forms of Tollgate's to bind, and the
// declarative mode is a sixth of the file (tollgate.js has it). Another copy's window.Tollgate
// (tollgate.js's, with bindForms) stays, its reset() and setStrings() reaching the widgets too.
const own = { execute, reset, setStrings, TollgateError, version }
const other = otherCopy()
page.Tollgate = other ? joined(other, own) : own
// The widgets' texts are fetched now, beside everything else, to be there when they first speak;
// after the globals are set, so that nothing here can keep them unset.
loadStrings(languageFor(document.documentElement), assetsFolderOf({}))
// Once the document is parsed (a tag in the head runs before the elements are there), and after
// this run: the vendors' elements, then the page's onload function.
whenParsed(() => {
  if (query.get('render') !== 'explicit') for (const vendorApi of installed) vendorApi.renderAll()
  callOnload(query.get('onload'))
  // Pages of the vendors this file does not serve get no token: the developer is told where to go.
  if (document.querySelector('altcha-widget,.frc-captcha')) console.warn('Tollgate: ALTCHA, Friendly Captcha: use tollgate.js, form data-tollgate (docs/migrating.md)')
})
